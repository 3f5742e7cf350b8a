# The benchmark runner names the gem's script <prog>_gem.rb; rtt.rb serves both
# bindings (its first argument picks one).
load File.expand_path('rtt.rb', __dir__)
