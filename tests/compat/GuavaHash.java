// tests/compat/GuavaHash.java: Guava's own Hashing.murmur3_128 and
// Hashing.consistentHash (Debian's libguava-java, on the classpath), for
// tests/compat/partitioners.py. No chash code.
//
// Input on stdin: a first line of bucket counts separated by spaces, then
// one key a line: "T <hex>" (the UTF-8 bytes of a text key; hashed with
// murmur3_128().hashString(key, UTF_8)) or "L <decimal long>" (the long
// itself). Output, one line a key: the long hashed (padToLong() of the
// hash, or the long), then consistentHash of it for each bucket count.
import com.google.common.hash.HashCode;
import com.google.common.hash.Hashing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

public class GuavaHash {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(
        new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(System.out);
    String[] countText = in.readLine().trim().split(" ");
    int[] counts = new int[countText.length];
    for (int i = 0; i < counts.length; i++) counts[i] = Integer.parseInt(countText[i]);
    String line;
    while ((line = in.readLine()) != null) {
      long input;
      if (line.startsWith("T ")) {
        String hex = line.substring(2);
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
          b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        String key = new String(b, StandardCharsets.UTF_8);
        HashCode h = Hashing.murmur3_128().hashString(key, StandardCharsets.UTF_8);
        input = h.padToLong();
      } else {
        input = Long.parseLong(line.substring(2));
      }
      StringBuilder sb = new StringBuilder();
      sb.append(input);
      for (int n : counts) {
        sb.append(' ').append(Hashing.consistentHash(input, n));
      }
      out.println(sb);
    }
    out.flush();
  }
}
