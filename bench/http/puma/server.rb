# frozen_string_literal: true

# cell-http-puma: app.rb's Rack application under Puma, configured here
# rather than by a config file or the puma command.
#
# Usage: ruby server.rb PORT
#
# Single mode (workers 0), a fixed pool of THREADS threads, 127.0.0.1 only,
# no banner or request log, exits 0 on SIGTERM/SIGINT.

require 'puma'
require 'puma/configuration'
require 'puma/launcher'
require_relative 'app'

# Puma's own maximum on MRI (5), fixed as the minimum too so that no thread
# is spawned or trimmed during a run. Under the GVL one thread runs Ruby at a
# time and cell pins the server to one CPU, so more threads buy little.
THREADS = 5

port = port_argument(ARGV)

# config_files '-': never load a config/puma.rb from the working directory.
conf = Puma::Configuration.new(config_files: ['-']) do |c|
  # Puma sets SO_REUSEADDR and TCP_NODELAY on the listener; accepted sockets
  # inherit TCP_NODELAY from it on Linux.
  c.bind "tcp://127.0.0.1:#{port}"
  c.workers 0 # single mode: no forked workers, no master process
  c.threads THREADS, THREADS
  c.environment 'production'
  c.quiet # no request log
  c.raise_exception_on_sigterm false # a SIGTERM before boot: exit 0 too
  c.tag 'cell-http-puma' # the process title's tag, not the cwd's name
  c.app App::CALL
end

# Puma 6 split the logging out of Events into LogWriter; Debian 12 ships
# Puma 5, Ubuntu 24.04 Puma 6. Either way the log goes nowhere.
if defined?(Puma::LogWriter)
  events = Puma::Events.new
  launcher = Puma::Launcher.new(conf, log_writer: Puma::LogWriter.null, events: events)
else
  events = Puma::Events.null
  launcher = Puma::Launcher.new(conf, events: events)
end
events.on_booted do
  # Puma's own SIGTERM handler stops gracefully: it waits for in-flight
  # requests, and a half-sent one holds it for first_data_timeout (30 s).
  # Once booted, SIGTERM and SIGINT halt instead, dropping every connection
  # at once, as the other servers here do.
  %w[TERM INT].each { |sig| trap(sig) { launcher.halt } }
  warn "listening on 127.0.0.1:#{port}"
end

begin
  launcher.run
rescue SystemCallError => e # e.g. the port is taken
  warn "server.rb: #{e.message}"
  exit 1
end
