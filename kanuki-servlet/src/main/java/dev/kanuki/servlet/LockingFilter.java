package dev.kanuki.servlet;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.Offer;
import dev.kanuki.ParkHandler;
import dev.kanuki.ParkingLock;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.spi.WorkSpool;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each request only while holding a lock named after it: a session, a user, a hidden
 * one-time form token, an {@code Idempotency-Key} header, a part of the path, or any
 * {@link RequestKey}. A double-clicked "buy" button, or two members of one team starting the same
 * action, then run one at a time on every server that shares the lock store ({@code redis://},
 * {@code memcached://}, a database, or {@code file:} on one machine).
 *
 * <p>The lock's name is {@code PREFIX + " " + KEY}; keys longer than 200 characters or not valid
 * as lock names become {@code PREFIX + " #" + HASH}. The prefix defaults to {@code web} plus the
 * context path ({@code web/shop}); give each application its own prefix when several with the
 * same context path share a store.
 *
 * <p>When the lock is busy the request does not run: by default at once, with {@code 409 Conflict},
 * a {@code Retry-After} header and a short plain-text body. With a wait, the request thread waits
 * up to that long for the lock (a container thread is held meanwhile: keep waits short), then is
 * answered {@code 503 Service Unavailable} (or 409, see {@link Builder#timeoutStatus}). When the
 * lock store fails the request is answered 503 too: it never runs unlocked.
 *
 * <p>Parking (opt-in, {@link Builder#parkWhenBusy}): for a busy key the filter asks the
 * application's {@link ParkingDecider}; when it returns work (bytes), the filter offers it to a
 * {@link ParkingLock} on the key's lock and answers {@code 202 Accepted} without running the
 * request: header {@value #PARKED_HEADER} with the item id when the work was parked for the
 * holder, {@value #APPLIED_HEADER} when the key had come free meanwhile and the work was applied
 * at once. A request that held the key looks at the spool after its release and applies what was
 * parked (its response completes after that). See docs/web.md.
 *
 * <p>A request without a key (no session yet, no such header) runs unlocked, unless the filter is
 * told to reject such requests ({@code 400 Bad Request}): a filter keyed by session cannot lock a
 * user's first request, which has no session yet.
 *
 * <p>The lock is released when the response is complete: after the filter chain returns, or, when
 * the servlet went asynchronous, when the async context completes, fails or times out
 * ({@link AsyncListener}). An exception from the servlet and a client that went away (the
 * servlet's write fails) release it the same way. While it is held, the {@link LockHandle} is the
 * request attribute {@link #HANDLE_ATTRIBUTE} (for its fencing token). Dispatches back into the
 * same filter (async, forward, error) pass through: the lock is already held.
 *
 * <p>Configure it in code with {@link #builder(LockProvider)}, or in {@code web.xml} with the
 * no-argument constructor and init parameters {@code kanuki.uri}, {@code kanuki.key},
 * {@code kanuki.prefix}, {@code kanuki.wait}, {@code kanuki.timeoutStatus},
 * {@code kanuki.retryAfter}, {@code kanuki.withoutKey} (see docs/web.md).
 */
public final class LockingFilter implements Filter {
    /** The request attribute that holds the request's {@link LockHandle} while the lock is held. */
    public static final String HANDLE_ATTRIBUTE = "dev.kanuki.servlet.LockHandle";
    /** The response header of a 202 whose work was parked for the key's holder: the item id. */
    public static final String PARKED_HEADER = "Kanuki-Parked";
    /** The response header of a 202 whose work was applied at once (the key came free): the item id. */
    public static final String APPLIED_HEADER = "Kanuki-Applied";

    private static final Logger LOG = LoggerFactory.getLogger(LockingFilter.class);
    private static final int MAX_KEY_LENGTH = 200;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /** Marks a request this filter instance already holds the lock for. */
    private final String heldAttribute = LockingFilter.class.getName() + ".held." + INSTANCES.incrementAndGet();
    private final boolean fromBuilder;
    private volatile FilterSettings settings;
    private boolean ownsProvider;

    /** For {@code web.xml}: the settings come from the init parameters (see the class comment). */
    public LockingFilter() {
        this.fromBuilder = false;
    }

    private LockingFilter(FilterSettings settings) {
        this.fromBuilder = true;
        this.settings = settings;
    }

    /**
     * Starts a filter on a lock provider the application opened.
     *
     * @param provider the lock store; the filter does not close it
     * @return a builder; {@link Builder#key} is required
     */
    public static Builder builder(LockProvider provider) {
        FilterSettings s = new FilterSettings();
        s.provider = Objects.requireNonNull(provider, "provider");
        return new Builder(s);
    }

    /**
     * Starts a filter that opens its own lock provider.
     *
     * @param uri the lock store's URI ({@code redis://host}, {@code file:/var/lock/app}); the filter
     *     opens it in {@link #init} and closes it in {@link #destroy}
     * @return a builder; {@link Builder#key} is required
     */
    public static Builder builder(String uri) {
        FilterSettings s = new FilterSettings();
        s.uri = Objects.requireNonNull(uri, "uri");
        return new Builder(s);
    }

    /**
     * Reads the init parameters (for a filter made by the no-argument constructor), opens the
     * lock store when the filter owns it, and sets the default prefix from the context path.
     *
     * @param config the container's filter configuration
     * @throws ServletException when a setting is invalid or the lock store cannot be opened
     */
    @Override
    public void init(FilterConfig config) throws ServletException {
        try {
            FilterSettings s = fromBuilder ? settings : FilterSettings.fromInitParameters(config).check();
            if (s.prefix == null) {
                String context = config.getServletContext().getContextPath();
                s.prefix = LockNames.validate("web" + (context == null || context.isEmpty() ? "/" : context));
            }
            if (s.provider == null) {
                s.provider = LockProvider.open(s.uri);
                ownsProvider = true;
            }
            if (s.parkingDecider != null && s.spool == null) {
                try {
                    s.spool = s.provider.spool();
                } catch (UnsupportedOperationException e) {
                    if (ownsProvider) {
                        s.provider.close();
                    }
                    throw new IllegalArgumentException("the lock store " + s.provider.uri() + " keeps no spool for parked"
                            + " work: give one, parkWhenBusy(decider, handler, Spools.directory(DIR))", e);
                }
            }
            settings = s;
            LOG.debug("locking requests of '{}' by {} on {}", s.prefix, config.getFilterName(), s.provider.uri());
        } catch (IllegalArgumentException | LockBackendException e) {
            throw new ServletException("kanuki LockingFilter '" + config.getFilterName() + "': " + e.getMessage(), e);
        }
    }

    /**
     * Runs the request under its lock, or answers it without running it (see the class comment).
     *
     * @param req the request
     * @param res the response
     * @param chain the rest of the chain
     * @throws IOException from the chain
     * @throws ServletException from the chain
     */
    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        FilterSettings s = settings;
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
                || request.getAttribute(heldAttribute) != null) {
            chain.doFilter(req, res);
            return;
        }
        if (s == null || s.provider == null || s.prefix == null) {
            throw new ServletException("kanuki LockingFilter used before init()");
        }
        String key = s.key.of(request);
        if (key == null) {
            if (s.rejectWithoutKey) {
                refuse(response, HttpServletResponse.SC_BAD_REQUEST, null, "400 Bad Request: this request has no lock key");
            } else {
                chain.doFilter(request, response);
            }
            return;
        }
        Optional<LockHandle> acquired;
        String name = lockName(s.prefix, key);
        try {
            var lock = s.provider.lock(name);
            acquired = s.wait.isZero() ? lock.tryAcquire() : lock.tryAcquire(s.wait);
        } catch (LockBackendException e) {
            LOG.warn("cannot lock request {} {}: {}", request.getMethod(), request.getRequestURI(), e.getMessage());
            refuse(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, s.retryAfter,
                    "503 Service Unavailable: the lock store cannot be reached; try again later");
            return;
        }
        if (acquired.isEmpty() && s.parkingDecider != null) {
            byte[] work = s.parkingDecider.park(request);
            if (work != null) {
                park(s, name, work, request, response);
                return;
            }
        }
        if (acquired.isEmpty()) {
            int status = s.wait.isZero() ? HttpServletResponse.SC_CONFLICT : s.timeoutStatus;
            refuse(response, status, s.retryAfter, status == HttpServletResponse.SC_CONFLICT
                    ? "409 Conflict: a request with the same key is in progress; try again later"
                    : "503 Service Unavailable: a request with the same key is in progress; try again later");
            return;
        }
        runHolding(s, acquired.get(), request, response, chain);
    }

    /** Offers a busy request's work to the key's parking lock and answers 202 (or 503 if the store failed). */
    private static void park(FilterSettings s, String name, byte[] work, HttpServletRequest request,
            HttpServletResponse response) throws IOException {
        Offer offer;
        try {
            offer = parkingLock(s, name).offer(work);
        } catch (LockBackendException e) {
            LOG.warn("cannot park request {} {}: {}", request.getMethod(), request.getRequestURI(), e.getMessage());
            refuse(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, s.retryAfter,
                    "503 Service Unavailable: the lock store cannot be reached; try again later");
            return;
        }
        if (response.isCommitted()) {
            return;
        }
        response.resetBuffer();
        response.setStatus(HttpServletResponse.SC_ACCEPTED);
        response.setHeader(offer.parked() ? PARKED_HEADER : APPLIED_HEADER, offer.itemId());
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("text/plain;charset=UTF-8");
        byte[] body = ((offer.parked() ? "202 Accepted: parked for the holder of this key as " : "202 Accepted: applied as ")
                + offer.itemId() + "\n").getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /** {@return the parking lock of one key: a few fields, made per use, so no map grows with the keys} */
    private static ParkingLock parkingLock(FilterSettings s, String name) {
        return ParkingLock.builder(s.provider.lock(name), s.spool, s.parkHandler).build();
    }

    /**
     * After a holding request released its key: applies what was parked meanwhile (the look after
     * the release that {@link ParkingLock} promises: a request that parked while this one held the
     * key may have tried the lock again before this one let go). Only with parking; never throws.
     */
    private static void drainAfterRelease(FilterSettings s, String name) {
        if (s.parkingDecider == null) {
            return;
        }
        try {
            if (!s.spool.isEmpty(name)) {
                parkingLock(s, name).drain();
            }
        } catch (RuntimeException e) {
            LOG.warn("lock '{}': applying the work parked for it failed; it waits for the next holder: {}",
                    SafeNames.printable(name), e.toString());
        }
    }

    private void runHolding(FilterSettings s, LockHandle handle, HttpServletRequest request,
            HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
        boolean handedToAsync = false;
        request.setAttribute(heldAttribute, Boolean.TRUE);
        request.setAttribute(HANDLE_ATTRIBUTE, handle);
        try {
            chain.doFilter(request, response);
        } finally {
            if (request.isAsyncStarted()) {
                // Still inside the dispatch that started async: the container runs no listener
                // before this returns, so onComplete cannot be missed.
                try {
                    request.getAsyncContext().addListener(new ReleaseOnCompletion(s, handle));
                    handedToAsync = true;
                } catch (IllegalStateException e) {
                    LOG.debug("async context already completed; releasing now", e);
                }
            }
            if (!handedToAsync) {
                release(s, handle);
            }
        }
    }

    /** Releases the lock when an async request ends, however it ends. */
    private static final class ReleaseOnCompletion implements AsyncListener {
        private final FilterSettings settings;
        private final LockHandle handle;

        ReleaseOnCompletion(FilterSettings settings, LockHandle handle) {
            this.settings = settings;
            this.handle = handle;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            release(settings, handle);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            release(settings, handle);
        }

        @Override
        public void onError(AsyncEvent event) {
            release(settings, handle);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // startAsync again: listeners are dropped unless they add themselves back.
            event.getAsyncContext().addListener(this);
        }
    }

    private static void release(FilterSettings s, LockHandle handle) {
        try {
            handle.close();
        } catch (RuntimeException e) {
            LOG.warn("cannot release lock '{}': {}", SafeNames.printable(handle.name()), e.toString());
        }
        drainAfterRelease(s, handle.name());
    }

    /** {@return the lock name for a request key: readable when short and valid, else hashed} */
    static String lockName(String prefix, String key) {
        if (key.length() <= MAX_KEY_LENGTH) {
            try {
                return LockNames.validate(prefix + " " + key);
            } catch (IllegalArgumentException e) {
                // a NUL or an unpaired surrogate: hashed below
            }
        }
        return prefix + " #" + SafeNames.hash(key);
    }

    private static void refuse(HttpServletResponse response, int status, Duration retryAfter, String message)
            throws IOException {
        if (response.isCommitted()) {
            return;
        }
        response.resetBuffer();
        response.setStatus(status);
        if (retryAfter != null) {
            long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
            response.setHeader("Retry-After", Long.toString(seconds));
        }
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("text/plain;charset=UTF-8");
        byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /** Closes the lock store when this filter opened it. */
    @Override
    public void destroy() {
        FilterSettings s = settings;
        if (ownsProvider && s != null && s.provider != null) {
            s.provider.close();
        }
    }

    /** Settings for a {@link LockingFilter} made in code. Not thread-safe; build once. */
    public static final class Builder {
        private final FilterSettings settings;

        private Builder(FilterSettings settings) {
            this.settings = settings;
        }

        /**
         * Sets what names a request's lock.
         *
         * @param key what names a request's lock (required)
         * @return this builder
         */
        public Builder key(RequestKey key) {
            settings.key = Objects.requireNonNull(key, "key");
            return this;
        }

        /**
         * Sets the prefix of every lock name.
         *
         * @param prefix put before every key, so that the keys of different applications never
         *     meet; default {@code web} plus the context path
         * @return this builder
         */
        public Builder prefix(String prefix) {
            settings.prefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /**
         * Sets how long a request waits for a busy lock.
         *
         * @param wait how long a request waits for a busy lock before it is refused; zero (the
         *     default) refuses at once with 409
         * @return this builder
         */
        public Builder waitUpTo(Duration wait) {
            settings.wait = Objects.requireNonNull(wait, "wait");
            return this;
        }

        /**
         * Sets the status of a refusal after a wait ran out.
         *
         * @param status the answer after a wait ran out: 503 (the default) or 409
         * @return this builder
         */
        public Builder timeoutStatus(int status) {
            settings.timeoutStatus = status;
            return this;
        }

        /**
         * Sets the {@code Retry-After} header of a refusal.
         *
         * @param retryAfter the {@code Retry-After} of a refusal, rounded up to whole seconds
         *     (at least 1); default 1 second
         * @return this builder
         */
        public Builder retryAfter(Duration retryAfter) {
            settings.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
            return this;
        }

        /**
         * Sets what happens to a request without a key.
         *
         * @param reject true: answer requests without a key {@code 400 Bad Request}; false (the
         *     default): run them unlocked
         * @return this builder
         */
        public Builder rejectWithoutKey(boolean reject) {
            settings.rejectWithoutKey = reject;
            return this;
        }

        /**
         * Parks work for a busy key instead of refusing the request: {@code decider} is asked for
         * each request whose key is busy (after the wait, if any); when it returns bytes the
         * filter answers {@code 202 Accepted} and {@code handler} applies them under the key's
         * lock, run by the request holding the key once it is finished (see the class comment).
         * The work is parked in the lock store's own spool ({@link LockProvider#spool()}, Redis);
         * other stores need {@link #parkWhenBusy(ParkingDecider, ParkHandler, WorkSpool)}.
         *
         * @param decider returns the work to park for a busy request, or null to refuse it as busy
         * @param handler applies parked work; every server sharing the store registers the same one
         * @return this builder
         */
        public Builder parkWhenBusy(ParkingDecider decider, ParkHandler handler) {
            settings.parkingDecider = Objects.requireNonNull(decider, "decider");
            settings.parkHandler = Objects.requireNonNull(handler, "handler");
            settings.spool = null;
            return this;
        }

        /**
         * Parks work for a busy key in the given spool ({@code Spools.directory(DIR)} for
         * {@code file:} and the other stores without a spool of their own); otherwise as
         * {@link #parkWhenBusy(ParkingDecider, ParkHandler)}.
         *
         * @param decider returns the work to park for a busy request, or null to refuse it as busy
         * @param handler applies parked work; every server sharing the spool registers the same one
         * @param spool where the work waits; every server must reach the same spool
         * @return this builder
         */
        public Builder parkWhenBusy(ParkingDecider decider, ParkHandler handler, WorkSpool spool) {
            parkWhenBusy(decider, handler);
            settings.spool = Objects.requireNonNull(spool, "spool");
            return this;
        }

        /**
         * Builds the filter.
         *
         * @return the filter; register it with the container, which calls {@link LockingFilter#init}
         * @throws IllegalArgumentException when no key was given or a setting is invalid
         */
        public LockingFilter build() {
            if (settings.key == null) {
                throw new IllegalArgumentException("a LockingFilter needs a key: RequestKey.session(), "
                        + "user(), parameter(name), header(name), path(regex) or your own");
            }
            return new LockingFilter(settings.check());
        }
    }
}
