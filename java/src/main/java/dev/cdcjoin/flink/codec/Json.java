package dev.cdcjoin.flink.codec;

import java.util.List;

/**
 * Minimal JSON writing: the configurations handed to the native library, and the quoted values in
 * the Java decoder's error messages.
 */
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

    /**
     * A JSON array of strings.
     *
     * @param items the strings
     * @return the array
     */
    public static String strings(List<String> items) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(quote(items.get(i)));
        }
        return sb.append(']').toString();
    }
}
