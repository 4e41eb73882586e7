package dev.cdcjoin.flink.codec;

/** JSON quoting for the values quoted in the Java decoder's error messages. */
public final class Json {

    private Json() {}

    /**
     * A JSON string literal.
     *
     * @param s the text
     * @return {@code s} quoted and escaped
     */
    public static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
