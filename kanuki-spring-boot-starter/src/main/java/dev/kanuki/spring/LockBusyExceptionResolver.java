package dev.kanuki.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a {@link LockBusyException} from a Spring MVC handler with {@code 409 Conflict}, a
 * {@code Retry-After} header (whole seconds, at least 1) and {@code Cache-Control: no-store}; the
 * body is the application's error page ({@code sendError}), as for any other status. Ordered
 * after Spring MVC's own resolvers, so that an {@code @ExceptionHandler} of the application wins.
 */
public class LockBusyExceptionResolver implements HandlerExceptionResolver, Ordered {
    private static final Logger log = LoggerFactory.getLogger(LockBusyExceptionResolver.class);

    private final Duration retryAfter;

    /**
     * Makes the resolver.
     *
     * @param retryAfter the {@code Retry-After} of an exception that names none ({@code kanuki.web.retry-after})
     */
    public LockBusyExceptionResolver(Duration retryAfter) {
        this.retryAfter = retryAfter;
    }

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
                                         Exception ex) {
        if (!(ex instanceof LockBusyException busy) || response.isCommitted()) {
            return null;
        }
        Duration after = busy.retryAfter().orElse(retryAfter);
        long seconds = Math.max(1, (after.toMillis() + 999) / 1000);
        response.setHeader("Retry-After", Long.toString(seconds));
        response.setHeader("Cache-Control", "no-store");
        try {
            response.sendError(HttpServletResponse.SC_CONFLICT, "busy: " + busy.lockName());
        } catch (IOException e) {
            log.debug("could not answer 409 for a busy lock: {}", e.toString());
        }
        return new ModelAndView();
    }

    /** {@return after Spring MVC's resolvers (order 0): the application's handlers come first} */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 100;
    }
}
