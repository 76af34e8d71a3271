package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import dev.kanuki.spi.LockUri;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code kanuki.*} properties: the lock store of the application's {@link LockProvider} bean,
 * {@link Locked @Locked}'s defaults, and the servlet filter's settings.
 */
@ConfigurationProperties(prefix = "kanuki")
public class KanukiProperties {

    /**
     * The lock store: a backend URI such as file:, file:/var/lock/app, redis://host:6379,
     * postgresql://host/db. The default, file:, is a per-user directory on this machine, as the
     * kanuki command's. Other backends need their module (kanuki-redis, ...) on the class path.
     */
    private String uri = "file:";

    /** The lease of ttl backends (Redis, memcached, etcd, file: ttl strategies); the URI option lease, 30s when unset. */
    private Duration lease;

    /** The longest pause between attempts on backends that poll; the URI option poll, 5ms when unset. */
    private Duration poll;

    /** How many waiters may block in a backend's blocking wait at once; the URI option waitThreads, 32 when unset. */
    private Integer waitThreads;

    /** Leave a stale lock for kanuki break instead of taking it over; the URI option keepStale, false when unset. */
    private Boolean keepStale;

    /** Other URI options of the backend, e.g. kanuki.options.strategy=mkdir for file:. */
    private Map<String, String> options = new LinkedHashMap<>();

    /** The {@code kanuki.locked.*} properties. */
    private final LockedProperties locked = new LockedProperties();

    /** The {@code kanuki.web.*} properties. */
    private final WebProperties web = new WebProperties();

    /** The {@code kanuki.metrics.*} properties. */
    private final MetricsProperties metrics = new MetricsProperties();

    /** The {@code kanuki.health.*} properties. */
    private final HealthProperties health = new HealthProperties();

    /** {@return the backend URI as set} */
    public String getUri() {
        return uri;
    }

    /**
     * Sets the backend URI.
     *
     * @param uri the backend URI
     */
    public void setUri(String uri) {
        this.uri = uri;
    }

    /** {@return the ttl backends' lease, or null for the backend's default} */
    public Duration getLease() {
        return lease;
    }

    /**
     * Sets the ttl backends' lease.
     *
     * @param lease the ttl backends' lease
     */
    public void setLease(Duration lease) {
        this.lease = lease;
    }

    /** {@return the longest pause between attempts, or null for the default} */
    public Duration getPoll() {
        return poll;
    }

    /**
     * Sets the longest pause between attempts.
     *
     * @param poll the longest pause between attempts
     */
    public void setPoll(Duration poll) {
        this.poll = poll;
    }

    /** {@return how many waiters may block at once, or null for the default} */
    public Integer getWaitThreads() {
        return waitThreads;
    }

    /**
     * Sets how many waiters may block at once.
     *
     * @param waitThreads how many waiters may block at once
     */
    public void setWaitThreads(Integer waitThreads) {
        this.waitThreads = waitThreads;
    }

    /** {@return whether stale locks are left for kanuki break, or null for the default} */
    public Boolean getKeepStale() {
        return keepStale;
    }

    /**
     * Sets whether stale locks are left for kanuki break.
     *
     * @param keepStale whether stale locks are left for kanuki break
     */
    public void setKeepStale(Boolean keepStale) {
        this.keepStale = keepStale;
    }

    /** {@return the backend's other URI options} */
    public Map<String, String> getOptions() {
        return options;
    }

    /**
     * Sets the backend's other URI options.
     *
     * @param options the backend's other URI options
     */
    public void setOptions(Map<String, String> options) {
        this.options = options;
    }

    /** {@return the {@code kanuki.locked.*} properties} */
    public LockedProperties getLocked() {
        return locked;
    }

    /** {@return the {@code kanuki.web.*} properties} */
    public WebProperties getWeb() {
        return web;
    }

    /** {@return the {@code kanuki.metrics.*} properties} */
    public MetricsProperties getMetrics() {
        return metrics;
    }

    /** {@return the {@code kanuki.health.*} properties} */
    public HealthProperties getHealth() {
        return health;
    }

    /**
     * The URI the provider is opened with: {@link #getUri()} with the typed options added to its
     * query. An option set both in the URI and as a property is refused, not silently chosen.
     *
     * @return the backend URI with every option
     * @throws IllegalArgumentException when the URI is malformed or an option is given twice
     */
    public String effectiveUri() {
        Map<String, String> added = new LinkedHashMap<>();
        if (lease != null) {
            added.put("lease", millis(lease, "kanuki.lease"));
        }
        if (poll != null) {
            added.put("poll", millis(poll, "kanuki.poll"));
        }
        if (waitThreads != null) {
            added.put("waitThreads", Integer.toString(waitThreads));
        }
        if (keepStale != null) {
            added.put("keepStale", Boolean.toString(keepStale));
        }
        options.forEach((key, value) -> {
            if (added.put(key, value) != null) {
                throw new IllegalArgumentException("the URI option '" + key + "' is set twice: as kanuki." + key
                        + " and as kanuki.options." + key + "; keep one");
            }
        });
        String base = uri == null || uri.isBlank() ? LockProvider.DEFAULT_URI : uri.trim();
        LockUri parsed = LockUri.parse(base);
        List<String> pairs = new ArrayList<>();
        for (Map.Entry<String, String> e : added.entrySet()) {
            if (parsed.params().containsKey(e.getKey())) {
                throw new IllegalArgumentException("the URI option '" + e.getKey() + "' is set twice: in kanuki.uri ("
                        + parsed.redacted() + ") and as a property; keep one");
            }
            pairs.add(encode(e.getKey()) + "=" + encode(e.getValue()));
        }
        if (pairs.isEmpty()) {
            return base;
        }
        return base + (base.indexOf('?') >= 0 ? "&" : "?") + String.join("&", pairs);
    }

    private static String millis(Duration d, String property) {
        if (d.isNegative()) {
            throw new IllegalArgumentException(property + " is negative: " + d);
        }
        return d.toMillis() + "ms";
    }

    /** As {@link LockUri} decodes: a space is %20 (a '+' stays a plus sign there). */
    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The {@code kanuki.locked.*} properties: {@link Locked @Locked} in this application. */
    public static class LockedProperties {
        /** Whether @Locked methods are intercepted. */
        private boolean enabled = true;

        /**
         * Put before every @Locked name, as it is, so that the names of different applications
         * sharing one lock store never meet; default: spring.application.name and a slash when
         * that is set, else nothing.
         */
        private String prefix;

        /**
         * The order of the @Locked advisor among the other advisors of a bean: lower runs
         * outside. The default runs outside @Transactional (whose order is the lowest
         * precedence): the lock is taken before the transaction begins and released after it
         * committed.
         */
        private int order = LockedAdvisor.DEFAULT_ORDER;

        /** {@return whether @Locked methods are intercepted} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether @Locked methods are intercepted.
         *
         * @param enabled whether @Locked methods are intercepted
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** {@return the prefix as set, or null for the default} */
        public String getPrefix() {
            return prefix;
        }

        /**
         * Sets put before every @Locked name.
         *
         * @param prefix put before every @Locked name
         */
        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }

        /** {@return the advisor's order} */
        public int getOrder() {
            return order;
        }

        /**
         * Sets the advisor's order.
         *
         * @param order the advisor's order
         */
        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** The {@code kanuki.web.*} properties: Spring MVC's answer to a busy lock, and the servlet filter. */
    public static class WebProperties {
        /**
         * The Retry-After header of a 409 Conflict answered for a LockBusyException (and of the
         * filter's refusals), rounded up to whole seconds, at least 1.
         */
        private Duration retryAfter = Duration.ofSeconds(1);

        /**
         * URL patterns of kanuki-servlet's LockingFilter (e.g. /checkout/*); the filter is
         * registered only when this is set and kanuki-servlet is on the class path.
         */
        private List<String> urlPatterns = new ArrayList<>();

        /**
         * The filter's request key: session, user, param:NAME, header:NAME, path:REGEX, or
         * class:NAME (a RequestKey with a no-argument constructor).
         */
        private String key;

        /** The filter's prefix before every key; default: web and the context path. */
        private String prefix;

        /** How long a request waits for a busy key before it is refused. */
        private Duration wait = Duration.ZERO;

        /** The filter's answer when a wait ran out: 503 or 409 (without a wait it is always 409). */
        private int timeoutStatus = 503;

        /** Whether a request without a key is refused (400) instead of run unlocked. */
        private boolean rejectWithoutKey;

        /** The filter's order among the application's servlet filters. */
        private int filterOrder;

        /** {@return the Retry-After of a refusal} */
        public Duration getRetryAfter() {
            return retryAfter;
        }

        /**
         * Sets the Retry-After of a refusal.
         *
         * @param retryAfter the Retry-After of a refusal
         */
        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        /** {@return the filter's URL patterns} */
        public List<String> getUrlPatterns() {
            return urlPatterns;
        }

        /**
         * Sets the filter's URL patterns.
         *
         * @param urlPatterns the filter's URL patterns
         */
        public void setUrlPatterns(List<String> urlPatterns) {
            this.urlPatterns = urlPatterns;
        }

        /** {@return the filter's request key} */
        public String getKey() {
            return key;
        }

        /**
         * Sets the filter's request key.
         *
         * @param key the filter's request key
         */
        public void setKey(String key) {
            this.key = key;
        }

        /** {@return the filter's prefix, or null for its default} */
        public String getPrefix() {
            return prefix;
        }

        /**
         * Sets the filter's prefix.
         *
         * @param prefix the filter's prefix
         */
        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }

        /** {@return how long a request waits for a busy key} */
        public Duration getWait() {
            return wait;
        }

        /**
         * Sets how long a request waits for a busy key.
         *
         * @param wait how long a request waits for a busy key
         */
        public void setWait(Duration wait) {
            this.wait = wait;
        }

        /** {@return the answer when a wait ran out} */
        public int getTimeoutStatus() {
            return timeoutStatus;
        }

        /**
         * Sets the answer when a wait ran out: 503 or 409.
         *
         * @param timeoutStatus the answer when a wait ran out: 503 or 409
         */
        public void setTimeoutStatus(int timeoutStatus) {
            this.timeoutStatus = timeoutStatus;
        }

        /** {@return whether a request without a key is refused} */
        public boolean isRejectWithoutKey() {
            return rejectWithoutKey;
        }

        /**
         * Sets whether a request without a key is refused.
         *
         * @param rejectWithoutKey whether a request without a key is refused
         */
        public void setRejectWithoutKey(boolean rejectWithoutKey) {
            this.rejectWithoutKey = rejectWithoutKey;
        }

        /** {@return the filter's order} */
        public int getFilterOrder() {
            return filterOrder;
        }

        /**
         * Sets the filter's order.
         *
         * @param filterOrder the filter's order
         */
        public void setFilterOrder(int filterOrder) {
            this.filterOrder = filterOrder;
        }
    }

    /** The {@code kanuki.metrics.*} properties: kanuki-micrometer's meters and observations of the provider's locks. */
    public static class MetricsProperties {
        /** Whether the provider's locks are recorded when kanuki-micrometer and a MeterRegistry are present. */
        private boolean enabled = true;

        /** Whether each wait and hold is also a Micrometer observation (a span with a tracing bridge). */
        private boolean observations = true;

        /**
         * Whether the lock's name is a tag of every meter: one time series per name, so only for
         * a few fixed names.
         */
        private boolean lockNamesAsTags;

        /** {@return whether the locks are recorded} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the locks are recorded.
         *
         * @param enabled whether the locks are recorded
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** {@return whether waits and holds are observations} */
        public boolean isObservations() {
            return observations;
        }

        /**
         * Sets whether waits and holds are observations.
         *
         * @param observations whether waits and holds are observations
         */
        public void setObservations(boolean observations) {
            this.observations = observations;
        }

        /** {@return whether lock names are tags} */
        public boolean isLockNamesAsTags() {
            return lockNamesAsTags;
        }

        /**
         * Sets whether lock names are tags.
         *
         * @param lockNamesAsTags whether lock names are tags
         */
        public void setLockNamesAsTags(boolean lockNamesAsTags) {
            this.lockNamesAsTags = lockNamesAsTags;
        }
    }

    /** The {@code kanuki.health.*} properties: the health indicator {@code kanuki} (actuator). */
    public static class HealthProperties {
        /** How long the lock store has to answer the health check's status call before it is DOWN. */
        private Duration timeout = Duration.ofSeconds(5);

        /** {@return how long the store has to answer} */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets how long the store has to answer.
         *
         * @param timeout how long the store has to answer
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }
}
