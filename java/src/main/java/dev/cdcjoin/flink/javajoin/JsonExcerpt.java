package dev.cdcjoin.flink.javajoin;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.cdcjoin.flink.codec.Json;
import java.io.IOException;
import java.io.StringWriter;

/**
 * The JSON of a value as error messages quote it: a bad record's reason shows an excerpt of the
 * value, never the whole of a large one.
 */
final class JsonExcerpt {

    /** Longest JSON excerpt quoted in an error message, in code points. */
    static final int MAX = 64;

    static final JsonFactory FACTORY = new JsonFactory();

    private JsonExcerpt() {}

    /** The JSON of the current value (consuming it if it is an object or array), shortened. */
    static String of(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case VALUE_STRING:
                return shorten(Json.quote(p.getText()));
            case START_OBJECT:
            case START_ARRAY:
                StringWriter w = new StringWriter();
                try (JsonGenerator g = FACTORY.createGenerator(w)) {
                    g.copyCurrentStructure(p);
                }
                return shorten(w.toString());
            default:
                return shorten(p.getText());
        }
    }

    /** {@code text} cut at {@value #MAX} code points with an ellipsis. */
    static String shorten(String text) {
        if (text.codePointCount(0, text.length()) <= MAX) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, MAX)) + "…";
    }
}
