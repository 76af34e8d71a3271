package dev.kanuki.spi;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A backend URI, parsed leniently enough for file paths with spaces:
 * {@code scheme:rest?key=value&key=value}. For {@code scheme://authority/path} forms
 * {@link #authority()} and {@link #path()} are split out.
 */
public final class LockUri {
    /** Options the engine itself reads from every URI. */
    public static final Set<String> ENGINE_OPTIONS = Set.of("lease", "poll", "waitThreads", "keepStale");

    private final String original;
    private final String scheme;
    private final String body;
    private final String authority;
    private final String path;
    private final Map<String, String> params;

    private LockUri(String original, String scheme, String body, String authority, String path,
                    Map<String, String> params) {
        this.original = original;
        this.scheme = scheme;
        this.body = body;
        this.authority = authority;
        this.path = path;
        this.params = params;
    }

    /**
     * Parses a backend URI.
     *
     * @param text e.g. {@code file:/var/lock/app?strategy=os}
     * @return the parsed URI
     * @throws IllegalArgumentException when there is no scheme or an option is malformed
     */
    public static LockUri parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty backend URI; write e.g. mem:, file:/var/lock/app");
        }
        int colon = text.indexOf(':');
        if (colon <= 0 || !text.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
            throw new IllegalArgumentException("backend URI '" + text
                    + "' has no scheme; write e.g. mem:, file:/var/lock/app, file:relative/dir");
        }
        String scheme = text.substring(0, colon).toLowerCase(Locale.ROOT);
        String rest = text.substring(colon + 1);
        String query = "";
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String authority = "";
        String path = rest;
        if (rest.startsWith("//")) {
            int slash = rest.indexOf('/', 2);
            authority = slash < 0 ? rest.substring(2) : rest.substring(2, slash);
            path = slash < 0 ? "" : rest.substring(slash);
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (!query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("option '" + pair + "' in backend URI '" + text
                            + "' has no value; write key=value");
                }
                String key = decode(pair.substring(0, eq));
                if (params.put(key, decode(pair.substring(eq + 1))) != null) {
                    throw new IllegalArgumentException("option '" + key + "' given twice in backend URI '" + text + "'");
                }
            }
        }
        return new LockUri(text, scheme, rest, authority, path, Collections.unmodifiableMap(params));
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** {@return the URI as written} */
    public String original() {
        return original;
    }

    /** {@return the scheme, lower case} */
    public String scheme() {
        return scheme;
    }

    /** {@return everything between the scheme's colon and the query} */
    public String body() {
        return body;
    }

    /** {@return the {@code host:port} part of {@code scheme://host:port/path}, or empty} */
    public String authority() {
        return authority;
    }

    /**
     * A server named in a URI's authority.
     *
     * @param host the host, without IPv6 brackets
     * @param port the port
     */
    public record Server(String host, int port) {
        /** {@return {@code host:port}, with brackets around an IPv6 host} */
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /**
     * The servers of {@code scheme://[user[:password]@]host[:port][,host2[:port]...]/path}.
     *
     * @param defaultPort the port of a server written without one
     * @return the servers in the order written, at least one
     * @throws IllegalArgumentException when there is no host, a host is empty or a port is not a
     *     number from 1 to 65535
     */
    public java.util.List<Server> servers(int defaultPort) {
        String hosts = hostPart();
        if (!body.startsWith("//") || hosts.isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + redacted() + "' has no host; write "
                    + scheme + "://host:" + defaultPort);
        }
        java.util.List<Server> out = new java.util.ArrayList<>();
        for (String one : hosts.split(",", -1)) {
            String host = one;
            int port = defaultPort;
            int portColon = one.startsWith("[") ? one.indexOf(':', Math.max(0, one.indexOf(']'))) : one.lastIndexOf(':');
            if (portColon >= 0) {
                host = one.substring(0, portColon);
                try {
                    port = Integer.parseInt(one.substring(portColon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException("backend URI '" + redacted() + "' has a bad port in '" + one
                            + "'; write host:port with a port from 1 to 65535");
                }
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isEmpty()) {
                throw new IllegalArgumentException("backend URI '" + redacted() + "' has an empty host in '" + hosts
                        + "'; write " + scheme + "://host1:port,host2:port");
            }
            out.add(new Server(host, port));
        }
        return java.util.List.copyOf(out);
    }

    /** {@return the decoded user of {@code scheme://user[:password]@host}, or empty} */
    public Optional<String> user() {
        String info = userInfo();
        if (info == null) {
            return Optional.empty();
        }
        int colon = info.indexOf(':');
        return Optional.of(decode(colon < 0 ? info : info.substring(0, colon)));
    }

    /** {@return the decoded password of {@code scheme://user:password@host}, or empty} */
    public Optional<String> password() {
        String info = userInfo();
        if (info == null || info.indexOf(':') < 0) {
            return Optional.empty();
        }
        return Optional.of(decode(info.substring(info.indexOf(':') + 1)));
    }

    private String userInfo() {
        int at = authority.lastIndexOf('@');
        return at < 0 ? null : authority.substring(0, at);
    }

    private String hostPart() {
        int at = authority.lastIndexOf('@');
        return at < 0 ? authority : authority.substring(at + 1);
    }

    /** {@return the path: after the authority when there is one, else the whole body} */
    public String path() {
        return path;
    }

    /** {@return every option, decoded, in the order written} */
    public Map<String, String> params() {
        return params;
    }

    /**
     * Reads an option of the URI's query.
     *
     * @param key an option name
     * @return its value, when given
     */
    public Optional<String> param(String key) {
        return Optional.ofNullable(params.get(key));
    }

    /**
     * Reads an option of the URI's query as a duration.
     *
     * @param key an option name
     * @param fallback the value when the option is absent
     * @return the option read as a duration
     * @throws IllegalArgumentException when the value is not a duration
     */
    public Duration durationParam(String key, Duration fallback) {
        String value = params.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("option " + key + "=" + value + " in backend URI '" + original
                    + "': " + e.getMessage(), e);
        }
    }

    /**
     * Fails on options nobody reads, so a typo is not silently ignored.
     *
     * @param backendOptions the options the backend reads (the engine's are added)
     * @throws IllegalArgumentException naming the unknown option and the known ones
     */
    public void rejectUnknownOptions(Set<String> backendOptions) {
        Set<String> known = new TreeSet<>(backendOptions);
        known.addAll(ENGINE_OPTIONS);
        for (String key : params.keySet()) {
            if (!known.contains(key)) {
                throw new IllegalArgumentException("unknown option '" + key + "' in backend URI '" + original
                        + "'; known options: " + String.join(", ", known));
            }
        }
    }

    /**
     * {@return the URI with secrets masked ({@code password=***}, {@code user:***@host}), for
     *     messages and logs}
     */
    public String redacted() {
        String out = original.replaceAll("(?i)([?&](password|pass|pwd|secret|token)=)[^&]*", "$1***");
        return out.replaceAll("^([A-Za-z][A-Za-z0-9+.-]*://[^/@:?]*):[^/@?]*@", "$1:***@");
    }

    @Override
    public String toString() {
        return redacted();
    }
}
