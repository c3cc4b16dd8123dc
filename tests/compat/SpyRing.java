// tests/compat/SpyRing.java: spymemcached's own KetamaNodeLocator (Debian's
// libspymemcached-java, on the classpath) over nodes that only answer
// getSocketAddress() (a java.lang.reflect.Proxy over MemcachedNode: no
// connection, no network), for tests/compat/spymemcached.py. No chash code.
//
// Input on stdin, one configuration after another:
//   "C <format> <hash> <weighted>"  format SPYMEMCACHED or LIBMEMCACHED, a
//                                   DefaultHashAlgorithm name, 0 or 1
//   "S <kind> <host> <ip> <port> <weight>"  a server, in list order: kind
//       "ip" (an InetAddress of the ip alone), "named" (the ip with host
//       name host attached, as a resolved name has it) or "unresolved"
//       (InetSocketAddress.createUnresolved(host, port)); "-" for no host
//       or ip; the weight goes in the weights map when weighted is 1
//   "A <hex>"                       servers from AddrUtil.getAddresses of
//                                   the text (the hex of its UTF-8), weight 1
//   "K <hex>"                       a key, the hex of its UTF-8 bytes
//   "E"                             the end of the configuration
// Output: for each server, "N <the string the formatter hashes for it>"
// (getKeyForNode(node, 0) less its "-0"), then for each key the list index
// of the server getPrimary gives.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.util.DefaultKetamaNodeLocatorConfiguration;

public class SpyRing {
  static byte[] unhex(String hex) {
    byte[] b = new byte[hex.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  static InetSocketAddress address(String kind, String host, String ip, int port)
      throws Exception {
    if (kind.equals("unresolved")) return InetSocketAddress.createUnresolved(host, port);
    byte[] raw = InetAddress.getByName(ip).getAddress();   // a literal: no lookup
    InetAddress a = kind.equals("named") ? InetAddress.getByAddress(host, raw)
                                         : InetAddress.getByAddress(raw);
    return new InetSocketAddress(a, port);
  }

  // A node whose only answer is its address (and Object's methods, which
  // the locator's maps call).
  static MemcachedNode node(InetSocketAddress sa) {
    return (MemcachedNode) Proxy.newProxyInstance(
        MemcachedNode.class.getClassLoader(), new Class<?>[] {MemcachedNode.class},
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "getSocketAddress": return sa;
            case "hashCode": return System.identityHashCode(proxy);
            case "equals": return proxy == args[0];
            case "toString": return "node " + sa;
            default: throw new UnsupportedOperationException(method.getName());
          }
        });
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(
        new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(System.out);
    String[] conf = null;
    List<MemcachedNode> nodes = new ArrayList<>();
    Map<InetSocketAddress, Integer> weights = new HashMap<>();
    List<String> keys = new ArrayList<>();
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split(" ");
      switch (f[0]) {
        case "C":
          conf = f;
          nodes.clear();
          weights.clear();
          keys.clear();
          break;
        case "S": {
          InetSocketAddress sa = address(f[1], f[2], f[3], Integer.parseInt(f[4]));
          nodes.add(node(sa));
          weights.put(sa, Integer.parseInt(f[5]));
          break;
        }
        case "A":
          for (InetSocketAddress sa : AddrUtil.getAddresses(
                   new String(unhex(f[1]), StandardCharsets.UTF_8))) {
            nodes.add(node(sa));
            weights.put(sa, 1);
          }
          break;
        case "K":
          keys.add(f.length > 1 ? new String(unhex(f[1]), StandardCharsets.UTF_8) : "");
          break;
        case "E": {
          KetamaNodeKeyFormatter.Format format = KetamaNodeKeyFormatter.Format.valueOf(conf[1]);
          DefaultHashAlgorithm alg = DefaultHashAlgorithm.valueOf(conf[2]);
          Map<InetSocketAddress, Integer> w =
              conf[3].equals("1") ? weights : new HashMap<InetSocketAddress, Integer>();
          KetamaNodeLocator loc = new KetamaNodeLocator(nodes, alg, format, w);
          KetamaNodeKeyFormatter fmt = new KetamaNodeKeyFormatter(format);
          Map<MemcachedNode, Integer> index = new IdentityHashMap<>();
          for (MemcachedNode n : nodes) {
            String k = fmt.getKeyForNode(n, 0);
            out.println("N " + k.substring(0, k.length() - 2));
            index.put(n, index.size());
          }
          for (String k : keys) out.println(index.get(loc.getPrimary(k)));
          out.flush();
          break;
        }
        default:
          throw new IllegalArgumentException("bad line: " + line);
      }
    }
    out.flush();
  }
}
