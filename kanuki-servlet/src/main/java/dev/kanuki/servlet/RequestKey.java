package dev.kanuki.servlet;

import dev.kanuki.spi.SafeNames;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpSession;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a request is locked by: the part of the request that names its lock. Requests with the
 * same key never run at once (across every server sharing the lock store); requests with
 * different keys do not wait for each other. {@link LockingFilter} prefixes the key, so that the
 * keys of different applications never meet.
 *
 * <p>The built-in keys start with their kind ({@code session:}, {@code user:}, {@code param:},
 * {@code header:}, {@code path:}), so that two kinds of keys never name the same lock.
 */
@FunctionalInterface
public interface RequestKey {

    /**
     * Names the lock of a request.
     *
     * @param request the request about to run
     * @return its key, or {@code null} when the request has none (it then passes unlocked, or is
     *     refused with 400 when the filter is told to reject requests without a key)
     */
    String of(HttpServletRequest request);

    /**
     * The HTTP session: one request per session at a time. Does not create a session; a request
     * without one has no key. The session id is a secret, and lock names show in lock listings,
     * file names and store keys: the key holds a hash of it, not the id.
     *
     * @return the key {@code session:HASH}
     */
    static RequestKey session() {
        return request -> {
            HttpSession session = request.getSession(false);
            return session == null ? null : "session:" + SafeNames.hash(session.getId());
        };
    }

    /**
     * The authenticated user ({@link HttpServletRequest#getUserPrincipal()}): one request per user
     * at a time, whichever session or server it comes through. Anonymous requests have no key.
     *
     * @return the key {@code user:NAME}
     */
    static RequestKey user() {
        return request -> {
            Principal user = request.getUserPrincipal();
            return user == null ? null : "user:" + user.getName();
        };
    }

    /**
     * A request parameter, such as a hidden one-time form token: a double-clicked submit sends the
     * same token twice. For {@code application/x-www-form-urlencoded} bodies and query strings the
     * container's {@link HttpServletRequest#getParameter} is used (it parses the body once; the
     * servlet's own {@code getParameter} calls see the same values). A {@code multipart/form-data}
     * body is never read here: only the query string is, so put the token in the form's
     * {@code action} URL ({@code action="/post?token=..."}) for multipart forms.
     *
     * @param name the parameter's name
     * @return the key {@code param:NAME=VALUE}
     */
    static RequestKey parameter(String name) {
        Objects.requireNonNull(name, "name");
        return request -> {
            String contentType = request.getContentType();
            boolean multipart = contentType != null
                    && contentType.toLowerCase(Locale.ROOT).startsWith("multipart/");
            String value = multipart ? queryParameter(request.getQueryString(), name) : request.getParameter(name);
            return value == null || value.isEmpty() ? null : "param:" + name + "=" + value;
        };
    }

    /**
     * A request header, such as {@code Idempotency-Key}. A request without it has no key.
     *
     * @param name the header's name (case does not matter)
     * @return the key {@code header:NAME=VALUE}, NAME as given here
     */
    static RequestKey header(String name) {
        Objects.requireNonNull(name, "name");
        return request -> {
            String value = request.getHeader(name);
            return value == null || value.isEmpty() ? null : "header:" + name + "=" + value;
        };
    }

    /**
     * A part of the path inside the application (the request URI without the context path),
     * found with a regular expression: its first group when it has groups, else the whole match.
     * {@code path("^/teams/([^/]+)/")} locks per team. A path the expression does not match has no key.
     *
     * @param regex a {@link Pattern} searched for in the path
     * @return the key {@code path:MATCH}
     * @throws java.util.regex.PatternSyntaxException when the expression is invalid
     */
    static RequestKey path(String regex) {
        Pattern pattern = Pattern.compile(regex);
        return request -> {
            String uri = request.getRequestURI();
            String context = request.getContextPath();
            String path = context != null && uri.startsWith(context) ? uri.substring(context.length()) : uri;
            Matcher m = pattern.matcher(path);
            if (!m.find()) {
                return null;
            }
            String match = m.groupCount() > 0 ? m.group(1) : m.group();
            return match == null || match.isEmpty() ? null : "path:" + match;
        };
    }

    /**
     * Reads a key description as {@code web.xml}'s {@code kanuki.key} gives it: {@code session},
     * {@code user}, {@code param:NAME}, {@code header:NAME}, {@code path:REGEX}, or
     * {@code class:NAME}, a {@code RequestKey} class with a public constructor without parameters.
     *
     * @param spec the description
     * @return the key it describes
     * @throws IllegalArgumentException when the description is not one of those forms
     */
    static RequestKey parse(String spec) {
        String s = Objects.requireNonNull(spec, "spec").strip();
        int colon = s.indexOf(':');
        String kind = colon < 0 ? s : s.substring(0, colon);
        String arg = colon < 0 ? "" : s.substring(colon + 1);
        switch (kind) {
            case "session":
                return session();
            case "user":
                return user();
            default:
                break;
        }
        if (arg.isEmpty()) {
            throw new IllegalArgumentException("kanuki.key '" + spec + "': expected session, user, param:NAME, "
                    + "header:NAME, path:REGEX or class:NAME");
        }
        switch (kind) {
            case "param":
                return parameter(arg);
            case "header":
                return header(arg);
            case "path":
                return path(arg);
            case "class":
                return FilterSettings.instantiate(arg);
            default:
                throw new IllegalArgumentException("kanuki.key '" + spec + "': unknown kind '" + kind
                        + "'; expected session, user, param:NAME, header:NAME, path:REGEX or class:NAME");
        }
    }

    /** {@return the first value of {@code name} in a query string, decoded; null when absent} */
    private static String queryParameter(String query, String name) {
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (key.equals(name)) {
                return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }
}
