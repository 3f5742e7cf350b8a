# Ruby gem `oxmq` (ruby/, issue 11): a native extension in Rust (magnus +
# rb-sys, ruby/ext/oxmq, a cargo workspace of its own so that the core's
# clippy/test never need Ruby's headers or libclang) with rbczmq's API.
#
#   make ruby        build the extension, package the gem (a platform gem
#                    holding the compiled .so) and `gem install --local` it,
#                    so `require 'oxmq'` / `require 'rbczmq'` work anywhere
#   make ruby-test   fmt + clippy of the extension, then the rspec suite
#                    (ruby/spec: API, GC stress, threads, interrupts, the
#                    rbczmq study scripts, interop with ffi-rzmq on libzmq)

DEB_PKGS += ruby ruby-dev ruby-rspec libclang-dev clang ruby-ffi-rzmq libzmq3-dev

RUBY_EXT := ruby/ext/oxmq/Cargo.toml
RUBY_GEM_DIR := target/ruby
RUBY_CARGO_FLAGS := --manifest-path $(RUBY_EXT) --target-dir target
GEM_INSTALL_FLAGS := --local --no-document $(if $(filter 0,$(shell id -u)),,--user-install)

.PHONY: ruby ruby-lint ruby-test

ruby: deb-deps
	@echo "==> cargo build --release $(RUBY_CARGO_FLAGS)"
	@$(CARGO) build --release $(RUBY_CARGO_FLAGS)
	@cp -f target/release/liboxmq_ruby.so ruby/lib/oxmq/oxmq.so
	@mkdir -p $(RUBY_GEM_DIR)
	@cd ruby && gem build -q oxmq.gemspec -o ../$(RUBY_GEM_DIR)/oxmq.gem >/dev/null
	@echo "==> gem install $(GEM_INSTALL_FLAGS) $(RUBY_GEM_DIR)/oxmq.gem"
	@gem install $(GEM_INSTALL_FLAGS) $(RUBY_GEM_DIR)/oxmq.gem >/dev/null
	@cd / && ruby -e 'require "rbczmq"; ZMQ::Context.new.destroy; puts "==> installed: oxmq #{ZMQ::OXMQ_VERSION} (#{$$LOADED_FEATURES.grep(/oxmq\.so/).first})"'

ruby-lint:
	@echo "==> cargo fmt --check / clippy -D warnings (ruby/ext/oxmq)"
	@$(CARGO) fmt --manifest-path $(RUBY_EXT) -- --check
	@$(CARGO) clippy --release $(RUBY_CARGO_FLAGS) -- -D warnings

# rspec runs the installed gem (no -I lib), as a user's script would.
ruby-test: ruby ruby-lint
	@echo "==> rspec ruby/spec"
	@cd ruby && rspec --no-color --format progress -I spec spec

TEST_STEPS += ruby-test

# The benchmark studies light up the gem's rows when it is installed.
bench-build: ruby
