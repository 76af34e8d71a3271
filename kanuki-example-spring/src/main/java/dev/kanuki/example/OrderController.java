package dev.kanuki.example;

import dev.kanuki.spring.Locked;
import dev.kanuki.spring.LockedContext;
import java.time.Duration;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /orders} with an {@code Idempotency-Key} header: one request per key at a time,
 * across every instance. A second request with a key whose order is still being placed gets
 * {@code 409 Conflict} with {@code Retry-After} (the starter answers the
 * {@link dev.kanuki.spring.LockBusyException}), so a client that retries a timed-out request
 * does not place the order twice concurrently.
 */
@RestController
public class OrderController {
    private final Duration work;
    private final long pid = ProcessHandle.current().pid();

    /**
     * Makes the controller.
     *
     * @param work how long placing an order takes, {@code example.order-work} (a stand-in for a
     *     payment call)
     */
    public OrderController(@Value("${example.order-work}") Duration work) {
        this.work = work;
    }

    /**
     * Places an order under the lock {@code order-KEY}.
     *
     * @param key the client's idempotency key
     * @return the order's key, the lock's fencing token and this instance's pid
     * @throws InterruptedException when the work is interrupted
     */
    @PostMapping("/orders")
    @Locked(name = "order-#{#key}", onBusy = Locked.OnBusy.THROW)
    public Map<String, Object> place(@RequestHeader("Idempotency-Key") String key) throws InterruptedException {
        Thread.sleep(work.toMillis()); // the slow part: a payment provider, say
        // the token would go with the write to a store that refuses older tokens (docs/fencing.md)
        return Map.of("order", key, "fencingToken", LockedContext.current().fencingToken(), "pid", pid);
    }
}
