# frozen_string_literal: true

# What the two Ruby servers (this WEBrick one and ../puma) share: the limits of the
# workloads, the record POST /users binds its body to, and the PORT argument.

require 'json'

MAX_BODY = 64 * 1024
U64_MAX = 2**64 - 1

# The record POST /users and POST /minimal/users/{id} bind their body to.
User = Struct.new(:name, :age, :adult) do
  # The User in a JSON body, or nil for bad JSON, a missing field, a wrong
  # type or invalid UTF-8 in name. Unknown fields are ignored.
  def self.from_json(body)
    h = JSON.parse(body)
    return nil unless h.is_a?(Hash)

    name, age, adult = h.values_at('name', 'age', 'adult')
    # JSON.parse keeps invalid UTF-8 in a string; JSON.generate would then
    # raise (a 500), so such a name is a bad request.
    return nil unless name.is_a?(String) && name.valid_encoding?
    return nil unless age.is_a?(Integer) && age.between?(0, U64_MAX)
    return nil unless [true, false].include?(adult)

    new(name, age, adult)
  rescue JSON::ParserError, EncodingError
    nil
  end
end

# The port of `ruby server.rb PORT`; usage and exit 2 for anything else.
def port_argument(argv)
  usage = lambda do
    warn 'usage: ruby server.rb PORT'
    exit 2
  end
  usage.call unless argv.length == 1 && argv[0].match?(/\A[0-9]{1,5}\z/)
  port = Integer(argv[0], 10)
  usage.call unless port.between?(1, 65_535)
  port
end
