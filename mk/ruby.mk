# Ruby gem `oxmq` (ruby/, issue 11): a native extension in Rust (magnus +
# rb-sys, ruby/ext/oxmq, a cargo workspace of its own so that the core's
# clippy/test never need Ruby's headers or libclang) with rbczmq's API.
# Shipped as a precompiled platform gem (issue 24): the compiled extension
# (libsodium linked in, debug info stripped) is inside, so `gem install` needs
# no Rust toolchain, no compiler and no network.
#
#   make gem         build the extension and package target/ruby/oxmq-<version>-<platform>.gem
#                    (x86_64-linux here; for this Ruby's minor version, whose ABI it is built for)
#   make ruby        make gem, then `gem install --local` it for this machine's
#                    Ruby, so `require 'oxmq'` / `require 'rbczmq'` work anywhere
#   make ruby-test   fmt + clippy of the extension, then the rspec suite
#                    (ruby/spec: API, GC stress, threads, interrupts, the
#                    rbczmq study scripts, interop with ffi-rzmq on libzmq)
#                    against the gem installed with a PATH without cargo/rustc
#                    into a throwaway GEM_HOME (target/ruby/gem-home)

DEB_PKGS += ruby ruby-dev ruby-rspec libclang-dev clang ruby-ffi-rzmq libzmq3-dev

RUBY_EXT := ruby/ext/oxmq/Cargo.toml
RUBY_GEM_DIR := target/ruby
RUBY_CARGO_FLAGS := --manifest-path $(RUBY_EXT) --target-dir target
GEM_INSTALL_FLAGS := --local --no-document $(if $(filter 0,$(shell id -u)),,--user-install)
RUBY_SO := ruby/lib/oxmq/oxmq.so
RUBY_GEM_SRCS := ruby/oxmq.gemspec $(shell find ruby/lib -name '*.rb' 2>/dev/null)
RUBY_GEM_NAME := $(shell cd ruby 2>/dev/null && ruby -e 'require "./lib/oxmq/version"; print "oxmq-#{ZMQ::OXMQ_VERSION}-#{Gem::Platform.local}"' 2>/dev/null)
GEM_FILE := $(RUBY_GEM_DIR)/$(RUBY_GEM_NAME).gem
GEM_TEST_HOME := $(RUBY_GEM_DIR)/gem-home
GEM_TEST_STAMP := $(GEM_TEST_HOME)/.installed
# The gems Debian's packages provide (rspec from ruby-rspec), without the
# directories `gem install` writes to, where `make ruby` puts oxmq for this
# machine: the tests see the throwaway GEM_HOME's oxmq and no other.
GEM_TEST_PATH = $(abspath $(GEM_TEST_HOME)):$(shell ruby -e 'print((Gem.default_path - [Gem.default_dir, Gem.user_dir]).join(":"))' 2>/dev/null)

.PHONY: gem ruby-so ruby ruby-lint ruby-test gem-test-home

# The extension without its debug info; copied only when it changed, so the
# gem is repackaged only then.
ruby-so: deb-deps
	@echo "==> cargo build --release $(RUBY_CARGO_FLAGS)"
	@$(CARGO) build --release $(RUBY_CARGO_FLAGS)
	@mkdir -p $(RUBY_GEM_DIR)
	@strip --strip-debug -o $(RUBY_GEM_DIR)/oxmq.so.stripped target/release/liboxmq_ruby.so
	@cmp -s $(RUBY_GEM_DIR)/oxmq.so.stripped $(RUBY_SO) || cp -f $(RUBY_GEM_DIR)/oxmq.so.stripped $(RUBY_SO)

$(GEM_FILE): $(RUBY_SO) $(RUBY_GEM_SRCS)
	@echo "==> gem build ruby/oxmq.gemspec -> $@"
	@rm -f $(RUBY_GEM_DIR)/oxmq-*.gem
	@cd ruby && gem build -q oxmq.gemspec -o ../$@ >/dev/null

gem: ruby-so $(GEM_FILE)
	@cd / && ruby -e 'require "rubygems/package"; s = Gem::Package.new(ARGV[0]).spec; \
	  abort "FAIL make gem: #{ARGV[0]} has extensions to compile: #{s.extensions}" unless s.extensions.empty?; \
	  abort "FAIL make gem: #{ARGV[0]} lacks lib/oxmq/oxmq.so" unless s.files.include?("lib/oxmq/oxmq.so"); \
	  printf("==> %s: %.1f MiB, platform %s, Ruby %s, precompiled (no extension to build)\n", \
	         ARGV[0], File.size(ARGV[0]) / 1048576.0, s.platform, s.required_ruby_version)' $(abspath $(GEM_FILE))

ruby: gem
	@echo "==> gem install $(GEM_INSTALL_FLAGS) $(GEM_FILE)"
	@gem install $(GEM_INSTALL_FLAGS) $(GEM_FILE) >/dev/null
	@cd / && ruby -e 'require "rbczmq"; ZMQ::Context.new.destroy; puts "==> installed: oxmq #{ZMQ::OXMQ_VERSION} (#{$$LOADED_FEATURES.grep(/oxmq\.so/).first})"'

# A user's install: a fresh GEM_HOME for each new gem, PATH without cargo/rustc.
gem-test-home: gem
	@if [ $(GEM_TEST_STAMP) -nt $(GEM_FILE) ]; then echo "==> $(GEM_TEST_HOME): the current gem, installed"; else \
	  echo "==> gem install --local $(GEM_FILE) into a fresh GEM_HOME $(GEM_TEST_HOME) (PATH without cargo/rustc)"; \
	  rm -rf $(GEM_TEST_HOME); \
	  PATH="$(NOCARGO_PATH)" GEM_HOME=$(GEM_TEST_HOME) GEM_PATH=$(GEM_TEST_HOME) \
	    gem install --local --no-document --install-dir $(GEM_TEST_HOME) $(GEM_FILE); \
	  touch $(GEM_TEST_STAMP); fi
	@cd / && PATH="$(NOCARGO_PATH)" GEM_HOME=$(abspath $(GEM_TEST_HOME)) GEM_PATH=$(abspath $(GEM_TEST_HOME)) \
	  ruby -e 'require "rbczmq"; so = $$LOADED_FEATURES.grep(/oxmq\.so/).first; \
	    abort "oxmq.so from #{so}, not the gem in #{ENV["GEM_HOME"]}" unless so.start_with?(ENV["GEM_HOME"] + "/"); \
	    ZMQ::Context.new.destroy; puts "==> installed: oxmq #{ZMQ::OXMQ_VERSION} (#{so})"'

ruby-lint:
	@echo "==> cargo fmt --check / clippy -D warnings (ruby/ext/oxmq)"
	@$(CARGO) fmt --manifest-path $(RUBY_EXT) -- --check
	@$(CARGO) clippy --release $(RUBY_CARGO_FLAGS) -- -D warnings

# rspec runs the installed gem, as a user's script would: from ruby/spec, as
# rspec puts ./lib on the load path (from ruby/ that is the source tree's
# extension); the spec helper checks that the extension it loaded is the one
# in GEM_TEST_HOME, and the child Rubies the specs start load that one too.
ruby-test: gem-test-home ruby-lint
	@echo "==> rspec ruby/spec (the gem installed in $(GEM_TEST_HOME))"
	@cd ruby/spec && PATH="$(NOCARGO_PATH)" GEM_HOME=$(abspath $(GEM_TEST_HOME)) GEM_PATH=$(GEM_TEST_PATH) \
	  OXMQ_EXPECT_GEM_HOME=$(abspath $(GEM_TEST_HOME)) rspec --no-color --format progress -I . .

TEST_STEPS += ruby-test

# The benchmark studies light up the gem's rows when it is installed.
bench-build: ruby
