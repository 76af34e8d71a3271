package dev.kanuki.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The command line as UTF-8 text, whatever the locale. The JVM decodes its arguments with the
 * locale's character set ({@code LANG=C} makes it ASCII, and "café" arrives as "caf??"), so the
 * same name typed in a cron job and in a terminal would be two locks. On Linux the bytes the
 * kernel passed are in {@code /proc/self/cmdline}; they are decoded here as UTF-8, strictly:
 * bytes that are not UTF-8 are refused rather than replaced by U+FFFD, since a replaced name
 * would silently be another lock, and a replaced argument another file.
 */
final class CommandLineText {
    private static final Path CMDLINE = Path.of("/proc/self/cmdline");

    private CommandLineText() {
    }

    /**
     * @param args the arguments as the JVM decoded them
     * @return the same arguments decoded from the kernel's bytes as UTF-8; {@code args} itself
     *     where those bytes cannot be read or do not line up with {@code args} (not Linux,
     *     or a caller other than the JVM's launcher)
     * @throws IllegalArgumentException naming the first argument that is not valid UTF-8
     */
    static String[] decode(String[] args) {
        byte[] raw;
        try {
            raw = Files.readAllBytes(CMDLINE);
        } catch (IOException | RuntimeException e) {
            return args;
        }
        List<byte[]> all = split(raw);
        if (all.size() < args.length) {
            return args;
        }
        List<byte[]> mine = all.subList(all.size() - args.length, all.size());
        String[] decoded = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            byte[] bytes = mine.get(i);
            if (isAscii(bytes)) {
                decoded[i] = new String(bytes, StandardCharsets.US_ASCII);
                if (!decoded[i].equals(args[i])) {
                    return args; // not the arguments of this main(): leave them as they came
                }
                continue;
            }
            try {
                decoded[i] = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("argument " + (i + 1) + " ('" + escapeInvalid(bytes)
                        + "') is not valid UTF-8; kanuki reads its command line as UTF-8 whatever the locale, "
                        + "so that a name is the same lock everywhere: convert it, e.g. with iconv -f latin1 -t utf-8");
            }
        }
        return decoded;
    }

    private static List<byte[]> split(byte[] raw) {
        List<byte[]> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == 0) {
                parts.add(Arrays.copyOfRange(raw, start, i));
                start = i + 1;
            }
        }
        if (start < raw.length) {
            parts.add(Arrays.copyOfRange(raw, start, raw.length));
        }
        return parts;
    }

    private static boolean isAscii(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }

    /** @return the bytes as text: UTF-8 where valid, {@code \xNN} for each other byte */
    static String escapeInvalid(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < bytes.length) {
            int length = sequenceLength(bytes, i);
            if (length > 0) {
                out.append(new String(bytes, i, length, StandardCharsets.UTF_8));
                i += length;
            } else {
                out.append(String.format("\\x%02x", bytes[i] & 0xff));
                i++;
            }
        }
        return Display.escapeControls(out.toString());
    }

    /** @return the length of the valid UTF-8 sequence at {@code i}, or 0 when there is none */
    private static int sequenceLength(byte[] bytes, int i) {
        int b = bytes[i] & 0xff;
        int length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3
                : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
        if (length <= 1 || i + length > bytes.length) {
            return length == 1 ? 1 : 0;
        }
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, i, length));
            return length;
        } catch (CharacterCodingException e) {
            return 0;
        }
    }
}
