# tests/compat/dalli_ring.rb: the real Dalli (Debian's ruby-dalli 3.0) says
# which server each key goes to, without a memcached server.
#
#   ruby dalli_ring.rb NAMESPACE SERVER...  < keys
#
# NAMESPACE is "-" for none. Each SERVER is a string as given to
# Dalli::Client ("host", "host:port", "host:port:weight"). Each input line
# is a key in hex (UTF-8 bytes, as a Rails key); each output line is the
# name of its server. A real Dalli::Client validates the key (namespace,
# shortening of long keys) and its ring places it; the ring's liveness
# check (which opens a socket) is left out by asking the ring for the
# server of the key's hash directly. The empty key, which Dalli refuses,
# is placed at the CRC-32 of its namespaced form, as chash does.
require 'dalli'
require 'zlib'

namespace = ARGV.shift
options = namespace == '-' ? {} : { namespace: namespace }
client = Dalli::Client.new(ARGV, options)
ring = client.send(:ring)
keys = client.instance_variable_get(:@key_manager)

$stdin.each_line do |line|
  key = [line.strip].pack('H*').force_encoding('UTF-8')
  key = key.empty? ? keys.key_with_namespace(key) : keys.validate_key(key)
  server = if ring.continuum
             ring.send(:server_for_hash_key, Zlib.crc32(key))
           else
             ring.servers.first
           end
  puts server.name
end
