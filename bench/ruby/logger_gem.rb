# The benchmark runner names the gem's script <prog>_gem.rb; logger.rb serves both
# bindings (its first argument picks one).
load File.expand_path('logger.rb', __dir__)
