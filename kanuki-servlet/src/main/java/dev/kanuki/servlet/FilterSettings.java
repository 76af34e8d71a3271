package dev.kanuki.servlet;

import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.Durations;
import jakarta.servlet.FilterConfig;
import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The settings of one {@link LockingFilter}, from its builder or from init parameters
 * ({@code web.xml}), checked once.
 */
final class FilterSettings {
    static final String URI = "kanuki.uri";
    static final String KEY = "kanuki.key";
    static final String PREFIX = "kanuki.prefix";
    static final String WAIT = "kanuki.wait";
    static final String TIMEOUT_STATUS = "kanuki.timeoutStatus";
    static final String RETRY_AFTER = "kanuki.retryAfter";
    static final String WITHOUT_KEY = "kanuki.withoutKey";

    /** Null until the filter is initialised when it opens its own provider from {@link #uri}. */
    LockProvider provider;
    /** The URI to open in {@code init}; null when the provider was given. */
    String uri;
    RequestKey key;
    /** Null: {@code web} + the context path, set at {@code init}. */
    String prefix;
    Duration wait = Duration.ZERO;
    int timeoutStatus = 503;
    Duration retryAfter = Duration.ofSeconds(1);
    boolean rejectWithoutKey;
    /** Null: a busy key is refused; else asked whether to park the request's work. */
    ParkingDecider parkingDecider;
    /** Applies parked work; set with {@link #parkingDecider}. */
    dev.kanuki.ParkHandler parkHandler;
    /** Where work is parked; null until {@code init} when it is the provider's own spool. */
    dev.kanuki.spi.WorkSpool spool;

    /** {@return settings from a filter's init parameters; every one but {@code kanuki.key} is optional} */
    static FilterSettings fromInitParameters(FilterConfig config) {
        FilterSettings s = new FilterSettings();
        String uri = config.getInitParameter(URI);
        s.uri = uri == null || uri.isBlank() ? LockProvider.DEFAULT_URI : uri.strip();
        String key = config.getInitParameter(KEY);
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException(KEY + " is required: session, user, param:NAME, header:NAME, "
                    + "path:REGEX or class:NAME");
        }
        s.key = RequestKey.parse(key);
        String prefix = config.getInitParameter(PREFIX);
        if (prefix != null && !prefix.isBlank()) {
            s.prefix = prefix.strip();
        }
        String wait = config.getInitParameter(WAIT);
        if (wait != null && !wait.isBlank()) {
            s.wait = duration(WAIT, wait);
        }
        String status = config.getInitParameter(TIMEOUT_STATUS);
        if (status != null && !status.isBlank()) {
            try {
                s.timeoutStatus = Integer.parseInt(status.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(TIMEOUT_STATUS + " '" + status + "': expected 409 or 503", e);
            }
        }
        String retry = config.getInitParameter(RETRY_AFTER);
        if (retry != null && !retry.isBlank()) {
            s.retryAfter = duration(RETRY_AFTER, retry);
        }
        String without = config.getInitParameter(WITHOUT_KEY);
        if (without != null && !without.isBlank()) {
            switch (without.strip().toLowerCase(Locale.ROOT)) {
                case "pass" -> s.rejectWithoutKey = false;
                case "reject" -> s.rejectWithoutKey = true;
                default -> throw new IllegalArgumentException(WITHOUT_KEY + " '" + without + "': expected pass or reject");
            }
        }
        return s;
    }

    /** Checks the values that need no container; throws IllegalArgumentException naming the bad one. */
    FilterSettings check() {
        Objects.requireNonNull(key, "key");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait " + wait + " is negative");
        }
        if (timeoutStatus != 409 && timeoutStatus != 503) {
            throw new IllegalArgumentException("timeout status " + timeoutStatus + ": expected 409 or 503");
        }
        if (retryAfter.isNegative()) {
            throw new IllegalArgumentException("retry-after " + retryAfter + " is negative");
        }
        if (prefix != null) {
            prefix = LockNames.validate(prefix);
        }
        return this;
    }

    private static Duration duration(String parameter, String text) {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(parameter + " '" + text + "': " + e.getMessage(), e);
        }
    }

    /** {@return a new instance of a {@link RequestKey} class named in {@code kanuki.key=class:NAME}} */
    static RequestKey instantiate(String className) {
        try {
            Class<?> type = Class.forName(className, true, contextLoader());
            if (!RequestKey.class.isAssignableFrom(type)) {
                throw new IllegalArgumentException("kanuki.key class " + className + " does not implement "
                        + RequestKey.class.getName());
            }
            return (RequestKey) type.getConstructor().newInstance();
        } catch (ClassNotFoundException | NoSuchMethodException | InstantiationException | IllegalAccessException
                | InvocationTargetException e) {
            throw new IllegalArgumentException("kanuki.key class " + className
                    + ": cannot create it with a public constructor without parameters: " + e, e);
        }
    }

    private static ClassLoader contextLoader() {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return loader != null ? loader : FilterSettings.class.getClassLoader();
    }
}
