package dev.kanuki.cli;

import java.util.List;
import java.util.Locale;

/**
 * Writes one JSON object, field by field, with no dependency. Just enough for the CLI's
 * {@code --json} output: strings, numbers, booleans, null, string lists and nested objects.
 * Control characters are escaped, so hostile lock names cannot reach a terminal raw.
 */
final class Json {
    private final StringBuilder out = new StringBuilder("{");
    private boolean first = true;

    private Json key(String key) {
        if (!first) {
            out.append(',');
        }
        first = false;
        quote(out, key);
        out.append(':');
        return this;
    }

    Json field(String key, String value) {
        key(key);
        if (value == null) {
            out.append("null");
        } else {
            quote(out, value);
        }
        return this;
    }

    Json field(String key, long value) {
        key(key).out.append(value);
        return this;
    }

    /** A number that may be absent: {@code null} in the output. */
    Json nullableField(String key, Long value) {
        key(key).out.append(value == null ? "null" : value.toString());
        return this;
    }

    Json field(String key, double value) {
        key(key);
        out.append(Double.isFinite(value) ? String.format(Locale.ROOT, "%.3f", value) : "null");
        return this;
    }

    Json field(String key, boolean value) {
        key(key).out.append(value);
        return this;
    }

    Json field(String key, Json object) {
        key(key).out.append(object == null ? "null" : object.toString());
        return this;
    }

    Json field(String key, List<String> values) {
        key(key).out.append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            quote(out, values.get(i));
        }
        out.append(']');
        return this;
    }

    /** @return the object as JSON text */
    @Override
    public String toString() {
        return out + "}";
    }

    /** @return a JSON array of the given objects */
    static String array(List<Json> objects) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < objects.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(objects.get(i));
        }
        return b.append(']').toString();
    }

    static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    // C1 controls and bidi overrides too: a terminal showing the JSON may act on them.
                    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029
                            || Character.getType(c) == Character.FORMAT) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
