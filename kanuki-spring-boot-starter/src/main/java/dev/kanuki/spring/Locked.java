package dev.kanuki.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs a Spring bean's method only while holding a kanuki lock, taken from the application's
 * {@link dev.kanuki.LockProvider} bean.
 *
 * <pre>{@code
 * @Scheduled(fixedRate = 60_000)
 * @Locked(value = "nightly-report", holdAtLeast = "30s")      // one server of three runs it
 * public void report() { ... }
 *
 * @Locked(value = "team-#{#team.id}", waitUpTo = "2s", onBusy = Locked.OnBusy.THROW)
 * public void deploy(Team team) {
 *     long token = LockedContext.current().fencingToken();  // for a fenced write
 * }
 * }</pre>
 *
 * <p>On a method, of a class or an interface; on a class or interface, every public method of the
 * bean is locked (each under its own name unless a name is given). The lock is taken when the
 * method is called through its Spring proxy (not by a call from the same object) and released
 * when it returns or throws, or {@link #holdAtLeast()} after it was taken. Inside the method the
 * handle is {@link LockedContext#current()}, or a parameter of type {@link dev.kanuki.LockHandle}
 * (the caller passes {@code null}; the lock's handle is put in its place).
 *
 * <p>Methods that return a reactive or asynchronous type ({@code Publisher}, {@code Mono},
 * {@code Flux}, {@code Flow.Publisher}, {@code CompletionStage}, {@code Future}) are refused at
 * start-up: their work runs after the method returned, when the lock would already be released.
 * An {@code @Async} method may return a {@code Future}: the lock is taken on the executor's thread,
 * around the method's body.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface Locked {

    /** {@return the lock's name; an alias of {@link #name()}} */
    @AliasFor("name")
    String value() default "";

    /**
     * The lock's name: a SpEL template over the method's arguments, e.g. {@code "team-#{#team.id}"}
     * ({@code #name} needs the class compiled with {@code -parameters}, as Spring Boot's build
     * plugins do; {@code #p0}, {@code #a0} always work), with {@code ${...}} placeholders resolved
     * first. The root object has {@code methodName}, {@code method}, {@code args}, {@code target}
     * and {@code targetClass}; {@code @bean} names a bean. The property {@code kanuki.locked.prefix}
     * is put before it. Empty: the class's name, a dot and the method's name.
     *
     * @return the name's template
     */
    @AliasFor("value")
    String name() default "";

    /**
     * How long to wait for a busy lock, e.g. {@code 500ms}, {@code 5s}, {@code 2m} or ISO-8601
     * ({@code PT5S}); placeholders allowed. {@code 0}, the default: one attempt, no waiting.
     *
     * @return the longest wait
     */
    String waitUpTo() default "0";

    /**
     * What a call does when the lock stays busy for its {@link #waitUpTo()}.
     *
     * @return {@link OnBusy#SKIP} (the default) or {@link OnBusy#THROW}
     */
    OnBusy onBusy() default OnBusy.SKIP;

    /**
     * Keep the lock at least this long after it was taken, even when the method returns sooner
     * (a scheduler thread releases it later): a job scheduled on several servers whose clocks
     * differ a little runs once per tick, not once per server (ShedLock's
     * {@code lockAtLeastFor}). Applies also when the method throws. The lease is renewed meanwhile.
     * Same syntax as {@link #waitUpTo()}; {@code 0}, the default: release on return.
     *
     * @return the shortest hold
     */
    String holdAtLeast() default "0";

    /**
     * What happens when kanuki finds the lock lost while the method runs (a lease not renewed, a
     * session ended, the lock broken behind it).
     *
     * @return {@link OnLost#NONE} (the default) or {@link OnLost#INTERRUPT}
     */
    OnLost onLost() default OnLost.NONE;

    /** What a call does when the lock is busy. */
    enum OnBusy {
        /**
         * The method does not run; the call returns {@code null}, an empty {@code Optional},
         * collection, map, stream or array, or {@code false}/zero for a primitive type (nothing for
         * {@code void}): the scheduled-job case.
         */
        SKIP,
        /** The method does not run; the call throws {@link LockBusyException} (Spring MVC answers 409 Conflict). */
        THROW
    }

    /** What happens when the lock is lost while the method runs. */
    enum OnLost {
        /**
         * Nothing; the method goes on. It can check the handle ({@link LockedContext#current()},
         * {@code isHeld()}, {@code verify()}) before it makes its work visible.
         */
        NONE,
        /**
         * The method's thread is interrupted (once), so that a method that waits or sleeps stops;
         * an interrupt still pending when the method returns is cleared, so that it does not
         * reach the caller's thread.
         */
        INTERRUPT
    }
}
