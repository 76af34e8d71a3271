package dev.kanuki.memcached;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/**
 * One meta-protocol answer: a two-letter code ({@code HD} stored/found, {@code VA} value follows,
 * {@code EN} miss, {@code NS} not stored, {@code EX} CAS mismatch, {@code NF} not found,
 * {@code MN}), its return flags ({@code c<cas>}, {@code t<ttl>}, {@code O<opaque>}) and, for
 * {@code VA}, the value.
 */
final class MetaReply {
    private final String code;
    private final String[] flags;
    private final byte[] value;

    MetaReply(String code, String[] flags, byte[] value) {
        this.code = code;
        this.flags = flags;
        this.value = value;
    }

    /** {@return the code, e.g. {@code HD}} */
    String code() {
        return code;
    }

    /** {@return true for {@code code}, e.g. {@code is("NS")}} */
    boolean is(String expected) {
        return code.equals(expected);
    }

    /** {@return true for an error line: {@code CLIENT_ERROR}, {@code SERVER_ERROR} or {@code ERROR}} */
    boolean isError() {
        return code.equals("CLIENT_ERROR") || code.equals("SERVER_ERROR") || code.equals("ERROR");
    }

    /** {@return the text of an error line, e.g. {@code out of memory storing object}; else empty} */
    String message() {
        return isError() && flags.length > 0 ? flags[0] : "";
    }

    /**
     * @param flag a return flag letter, e.g. {@code 'c'}
     * @return the text after the letter, or {@code null} when the flag is absent
     */
    String flag(char flag) {
        if (isError()) {
            return null;
        }
        for (String f : flags) {
            if (!f.isEmpty() && f.charAt(0) == flag) {
                return f.substring(1);
            }
        }
        return null;
    }

    /**
     * @param flag a return flag letter with a number, e.g. {@code 'c'} or {@code 't'}
     * @return its value, or empty when absent
     */
    OptionalLong number(char flag) {
        String text = flag(flag);
        if (text == null) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** {@return the value of a {@code VA} answer, else {@code null}} */
    byte[] value() {
        return value;
    }

    /** {@return the value as UTF-8 text, or {@code null}} */
    String text() {
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return code + (flags.length == 0 ? "" : " " + String.join(" ", flags))
                + (value == null ? "" : " (" + value.length + " bytes)");
    }
}
