# frozen_string_literal: true

# cell-http-ruby-webrick: the bench/http workloads on Ruby's WEBrick.
#
# Usage: ruby server.rb PORT
#
# Binds 127.0.0.1 only (Ruby's listen sets SO_REUSEADDR), sets TCP_NODELAY
# on every accepted socket, logs nothing but the listening line, reads no
# environment and exits 0 on SIGTERM/SIGINT.

require 'socket'
require 'webrick'
require_relative 'workloads'

# One servlet for every path: it overrides service, not do_GET and friends,
# so it chooses the 404 and 405 answers itself (HEAD included).
class App < WEBrick::HTTPServlet::AbstractServlet
  def service(req, res)
    get = req.request_method == 'GET'
    case req.path # already without the query string
    when '/' then get ? text(res, 200, "hello, world\n") : not_allowed(res, 'GET')
    when '/json' then get ? json(res, { message: 'Hello, World!' }) : not_allowed(res, 'GET')
    when '/users' then req.request_method == 'POST' ? create_user(req, res) : not_allowed(res, 'POST')
    when %r{\A/users/([0-9]{1,20})\z}
      id = Integer(Regexp.last_match(1), 10)
      if id > U64_MAX then text(res, 404, "not found\n")
      elsif get then json(res, { id: id })
      else not_allowed(res, 'GET')
      end
    when %r{\A/minimal/users/([0-9]{1,20})\z}
      id = Integer(Regexp.last_match(1), 10)
      if id > U64_MAX then text(res, 404, "not found\n") # WEBrick skips the unread body
      elsif req.request_method == 'POST' then create_user(req, res, id)
      else not_allowed(res, 'POST')
      end
    else text(res, 404, "not found\n")
    end
  end

  private

  # WEBrick sets Content-Length from a String body, so nothing is chunked.
  def text(res, status, body)
    res.status = status
    res['Content-Type'] = 'text/plain'
    res.body = body
  end

  def json(res, value)
    res.status = 200
    res['Content-Type'] = 'application/json'
    res.body = JSON.generate(value)
  end

  def not_allowed(res, allow)
    res['Allow'] = allow
    text(res, 405, "method not allowed\n")
  end

  # POST /users, and POST /minimal/users/{id} with the routed id merged in.
  def create_user(req, res, id = nil)
    if req.content_length > MAX_BODY
      res.keep_alive = false # the body stays unread: close, not resync
      return text(res, 413, "payload too large\n")
    end
    user = User.from_json(req.body || '')
    return text(res, 400, "bad request\n") unless user

    json(res, id ? { id: id, **user.to_h } : user.to_h)
  end
end

port = port_argument(ARGV)

begin
  server = WEBrick::HTTPServer.new(
    BindAddress: '127.0.0.1',
    Port: port,
    # Only fatal errors; the start-up INFO lines and per-connection errors
    # (client resets) stay out of stderr. No access log at all.
    Logger: WEBrick::Log.new($stderr, WEBrick::BasicLog::FATAL),
    AccessLog: [],
    DoNotReverseLookup: true,
    AcceptCallback: ->(sock) { sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1) },
    StartCallback: -> { warn "listening on 127.0.0.1:#{port}" }
  )
rescue SystemCallError => e
  warn "server.rb: #{e.message}"
  exit 1
end
server.mount('/', App)

# WEBrick's start returns only once every connection thread has ended: up
# to 0.5 s for an idle keep-alive connection, up to RequestTimeout (30 s)
# for a half-sent request. So it runs in a thread of its own, and the main
# thread shuts the listener down and exits 0 on a signal; exiting ends the
# connection threads.
stop = Queue.new
%w[TERM INT].each { |sig| trap(sig) { stop << sig } }
Thread.new { server.start }.abort_on_exception = true
stop.pop
server.shutdown
