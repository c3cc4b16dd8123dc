/*
** tests/compat/DubboRing.java: Apache Dubbo's ConsistentHashLoadBalance
** ring (the stateless one of Dubbo 2.6 - 2.7.14 and 3.x), written for the
** test from the rule, with the same Java classes Dubbo builds it from: a
** TreeMap<Long, ...> filled with put() (so an equal point left by an
** earlier provider is replaced), MessageDigest MD5 over String.getBytes in
** UTF-8, the label made by Java's String + int, and ceilingEntry() with a
** wrap to firstEntry() for the lookup. tests/compat/dubbo_check.py runs it.
**
** Input on stdin, one item a line:
**   N <hash.nodes>          the replica count (points per provider)
**   P <address>             a provider, in list order
**   K <hex of UTF-8 bytes>  a key (the first argument's text)
** Output: one line per key, the address of the provider that serves it.
*/
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class DubboRing {
    /* Bytes 4*word .. 4*word+3 of the digest, little-endian, unsigned. */
    static long word(byte[] digest, int word) {
        long value = 0;
        for (int b = 3; b >= 0; b--) {
            value = (value << 8) | (digest[4 * word + b] & 0xFF);
        }
        return value;
    }

    static byte[] md5(String text) throws Exception {
        MessageDigest md = MessageDigest.getInstance("MD5");
        return md.digest(text.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int hashNodes = 160;
        List<String> providers = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (String line; (line = in.readLine()) != null; ) {
            String value = line.substring(2);
            switch (line.charAt(0)) {
                case 'N': hashNodes = Integer.parseInt(value); break;
                case 'P': providers.add(value); break;
                case 'K': keys.add(fromHex(value)); break;
                default: throw new IllegalArgumentException(line);
            }
        }
        TreeMap<Long, String> ring = new TreeMap<>();
        for (String address : providers) {
            for (int i = 0; i < hashNodes / 4; i++) {
                byte[] digest = md5(address + i);
                for (int w = 0; w < 4; w++) {
                    ring.put(word(digest, w), address);
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (String key : keys) {
            Map.Entry<Long, String> e = ring.ceilingEntry(word(md5(key), 0));
            if (e == null) {
                e = ring.firstEntry();
            }
            out.append(e.getValue()).append('\n');
        }
        System.out.print(out);
    }

    static String fromHex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
