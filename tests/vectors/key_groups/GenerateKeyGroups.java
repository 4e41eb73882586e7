import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Writes flink.tsv: the key group Flink assigns to a key whose hash code is {@code
 * Arrays.hashCode(bytes)} (as {@code dev.cdcjoin.flink.JoinKey}'s), for several max parallelisms.
 * Run once with Flink's own jars, see README.md.
 */
public class GenerateKeyGroups {

    /** A key hashed as JoinKey is. */
    record Key(byte[] bytes) {
        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }

    public static void main(String[] args) {
        int[] maxParallelisms = {1, 2, 3, 7, 128, 1000, 4096, 32768};
        Random random = new Random(13);
        System.out.println("# key (hex)\tmax parallelism\tkey group, by Flink 2.3.0's"
                + " KeyGroupRangeAssignment.assignToKeyGroup; see README.md");
        for (int k = 0; k < 64; k++) {
            byte[] key = new byte[k < 41 ? k : random.nextInt(64)];
            random.nextBytes(key);
            for (int m : maxParallelisms) {
                int group = KeyGroupRangeAssignment.assignToKeyGroup(new Key(key), m);
                System.out.println(HexFormat.of().formatHex(key) + "\t" + m + "\t" + group);
            }
        }
    }
}
