// TreeMapRing: a consistent-hash ring built the way many Java teams write
// their own (the widely copied "ConsistentHashRouter" pattern), so that
// tests/compat/ownring.py can check chash's `ring` options label, first,
// ties and the md5be hash against a real Java TreeMap on Debian's OpenJDK.
//
//   java TreeMapRing.java SEPARATOR VNODES NODE... < keys > owners
//
// The ring: each node, in argument order, puts VNODES points into a
// TreeMap<Long, String>; point i (0 .. VNODES-1) sits at the hash of the
// text node + SEPARATOR + i, and the map's put replaces the owner of a
// position that is already there, so of two equal points the node added
// later wins. The hash of a text is the first four bytes of the MD5 of its
// UTF-8 bytes read as a big-endian unsigned 32-bit number, held in a long.
// A key goes to the first point at or after its hash (tailMap), wrapping
// to the first point of the map. Keys come one a line in hex of their
// UTF-8 bytes; each answer is the owner on a line of its own. With VNODES
// 0 it prints the hash of each key instead, to check chash's md5be.
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SortedMap;
import java.util.TreeMap;

public class TreeMapRing {
    private final TreeMap<Long, String> ring = new TreeMap<>();
    private final MessageDigest md5;

    TreeMapRing() throws Exception {
        md5 = MessageDigest.getInstance("MD5");
    }

    long hash(String text) {
        md5.reset();
        byte[] digest = md5.digest(text.getBytes(StandardCharsets.UTF_8));
        long h = 0;
        for (int i = 0; i < 4; i++) {
            h = (h << 8) | (digest[i] & 0xFF);
        }
        return h;
    }

    void addNode(String node, String separator, int vnodes) {
        for (int i = 0; i < vnodes; i++) {
            ring.put(hash(node + separator + i), node);
        }
    }

    String route(String key) {
        SortedMap<Long, String> tail = ring.tailMap(hash(key));
        return ring.get(tail.isEmpty() ? ring.firstKey() : tail.firstKey());
    }

    public static void main(String[] args) throws Exception {
        int vnodes = args.length < 2 ? -1 : Integer.parseInt(args[1]);
        if (vnodes < 0 || (vnodes > 0 && args.length < 3)) {
            System.err.println("usage: java TreeMapRing.java SEPARATOR VNODES NODE... < hex keys");
            System.exit(2);
        }
        TreeMapRing r = new TreeMapRing();
        for (int i = 2; i < args.length; i++) {
            r.addNode(args[i], args[0], vnodes);
        }
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        HexFormat hex = HexFormat.of();
        for (String line; (line = in.readLine()) != null; ) {
            String key = new String(hex.parseHex(line), StandardCharsets.UTF_8);
            out.write(vnodes == 0 ? Long.toString(r.hash(key)) : r.route(key));
            out.newLine();
        }
        out.flush();
    }
}
