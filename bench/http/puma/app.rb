# frozen_string_literal: true

# The bench/http workloads as a bare Rack application: a lambda from the env
# hash to [status, headers, body]. It needs no rack gem; server.rb runs it
# under Puma.

require 'json'
require_relative '../ruby-webrick/workloads'

module App
  # Lower-case header names, as Rack 3 requires (Rack 2 accepts them too).
  # Content-Length is set here, so Puma never chunks a reply.
  def self.reply(status, type, body, extra = {})
    [status, { 'content-type' => type, 'content-length' => body.bytesize.to_s, **extra }, [body]]
  end

  def self.text(status, body, extra = {}) = reply(status, 'text/plain', body, extra)
  def self.json(value) = reply(200, 'application/json', JSON.generate(value))
  def self.not_found = text(404, "not found\n")
  def self.not_allowed(allow) = text(405, "method not allowed\n", { 'allow' => allow })

  # POST /users, and POST /minimal/users/{id} with the routed id merged in.
  # Puma has read the whole body before the app runs, so a 413 leaves the
  # connection in sync.
  def self.create_user(env, id = nil)
    return text(413, "payload too large\n") if env['CONTENT_LENGTH'].to_i > MAX_BODY

    user = User.from_json(env['rack.input'].read)
    return text(400, "bad request\n") unless user

    json(id ? { id: id, **user.to_h } : user.to_h)
  end

  CALL = lambda do |env|
    get = env['REQUEST_METHOD'] == 'GET'
    case env['PATH_INFO'] # the path without the query string
    when '/' then get ? text(200, "hello, world\n") : not_allowed('GET')
    when '/json' then get ? json({ message: 'Hello, World!' }) : not_allowed('GET')
    when '/users' then env['REQUEST_METHOD'] == 'POST' ? create_user(env) : not_allowed('POST')
    when %r{\A/users/([0-9]{1,20})\z}
      id = Integer(Regexp.last_match(1), 10)
      if id > U64_MAX then not_found
      elsif get then json({ id: id })
      else not_allowed('GET')
      end
    when %r{\A/minimal/users/([0-9]{1,20})\z}
      id = Integer(Regexp.last_match(1), 10)
      if id > U64_MAX then not_found
      elsif env['REQUEST_METHOD'] == 'POST' then create_user(env, id)
      else not_allowed('POST')
      end
    else not_found
    end
  end
end
