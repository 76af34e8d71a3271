package dev.kanuki.spring;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.SafeNames;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationException;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Runs a {@link Locked @Locked} method under its lock: evaluates the name, takes the lock (one
 * attempt or a wait), skips or throws when it is busy, makes the handle available to the method,
 * interrupts it when the lock is lost (if asked), and releases the lock on return, or later for
 * {@link Locked#holdAtLeast()}.
 */
public final class LockedInterceptor implements MethodInterceptor {
    private static final Logger log = LoggerFactory.getLogger(LockedInterceptor.class);

    private final Supplier<LockProvider> provider;
    private final Supplier<String> prefix;
    private final Function<String, String> placeholders;
    private final BeanFactory beanFactory;
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final Map<MethodClassKey, Optional<LockedMethod>> methods = new ConcurrentHashMap<>();
    /** Releases of {@link Locked#holdAtLeast()}: one daemon thread, started on first use. */
    private final ScheduledThreadPoolExecutor releases;

    /**
     * Makes the interceptor.
     *
     * @param provider the lock provider, looked up on first use (advisors are made before other beans)
     * @param prefix the prefix put before every name ({@code kanuki.locked.prefix}), looked up on first use
     * @param placeholders resolves {@code ${...}} placeholders in the annotation's attributes
     * @param beanFactory for {@code @bean} references in name templates; may be null
     */
    public LockedInterceptor(Supplier<LockProvider> provider, Supplier<String> prefix,
                             Function<String, String> placeholders, BeanFactory beanFactory) {
        this.provider = memoized(provider);
        this.prefix = memoized(prefix);
        this.placeholders = placeholders;
        this.beanFactory = beanFactory;
        this.releases = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "kanuki-locked-release");
            t.setDaemon(true);
            return t;
        });
        releases.setRemoveOnCancelPolicy(true);
        releases.setExecuteExistingDelayedTasksAfterShutdownPolicy(true);
    }

    /** The provider and the prefix are looked up at the first call (not while advisors are made), then kept. */
    private static <T> Supplier<T> memoized(Supplier<T> supplier) {
        return new Supplier<>() {
            private volatile T value;

            @Override
            public T get() {
                T v = value;
                if (v == null) {
                    v = supplier.get();
                    value = v;
                }
                return v;
            }
        };
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
        LockedMethod locked = describe(invocation.getMethod(), targetClass).orElse(null);
        if (locked == null) {
            return invocation.proceed();
        }
        Object[] args = invocation.getArguments();
        String name = name(locked, args, target, targetClass);
        DistributedLock lock = provider.get().lock(name);
        Optional<LockHandle> acquired = locked.wait.isZero() ? lock.tryAcquire() : lock.tryAcquire(locked.wait);
        if (acquired.isEmpty()) {
            return busy(locked, name);
        }
        LockHandle handle = acquired.get();
        long acquiredAt = System.nanoTime();
        if (locked.handleParameter >= 0) {
            args[locked.handleParameter] = handle; // the live array of the invocation: the method sees the handle
        }
        Interrupter interrupter = locked.onLost == Locked.OnLost.INTERRUPT ? new Interrupter(Thread.currentThread()) : null;
        if (interrupter != null) {
            handle.lost().thenRun(interrupter::lost);
        }
        LockedContext.push(handle);
        try {
            return invocation.proceed();
        } finally {
            LockedContext.pop();
            if (interrupter != null) {
                interrupter.done();
            }
            release(locked, handle, acquiredAt);
        }
    }

    private Object busy(LockedMethod locked, String name) {
        String why = locked.wait.isZero() ? "busy" : "still busy after " + locked.wait.toMillis() + " ms";
        if (locked.onBusy == Locked.OnBusy.THROW) {
            throw new LockBusyException(name, locked.description + ": the lock '" + SafeNames.printable(name) + "' is " + why,
                    null);
        }
        log.debug("{}: the lock '{}' is {}; skipped", locked.description, SafeNames.printable(name), why);
        return locked.skipValue();
    }

    private void release(LockedMethod locked, LockHandle handle, long acquiredAt) {
        long left = locked.holdAtLeast.toNanos() - (System.nanoTime() - acquiredAt);
        if (left <= 0 || !handle.isHeld()) {
            handle.close();
            return;
        }
        try {
            releases.schedule(handle::close, left, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) { // shut down with the context: release now
            handle.close();
        }
    }

    private String name(LockedMethod locked, Object[] args, Object target, Class<?> targetClass) {
        String name;
        if (locked.name == null) {
            name = locked.fixedName;
        } else {
            MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                    new LockedExpressionRoot(locked.method, args, target, targetClass), locked.method, args, parameterNames);
            if (beanFactory != null) {
                context.setBeanResolver(new BeanFactoryResolver(beanFactory));
            }
            try {
                name = locked.name.getValue(context, String.class);
            } catch (EvaluationException e) {
                throw new IllegalArgumentException(locked.description + ": cannot evaluate the name template '"
                        + locked.template + "': " + e.getMessage(), e);
            }
            if (name == null) {
                name = "";
            }
        }
        String full = prefix.get() + name;
        try {
            return LockNames.validate(full);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(locked.description + ": the lock name '" + SafeNames.printable(full)
                    + "'" + (locked.name == null ? "" : " (from '" + locked.template + "')") + " is not a lock name: "
                    + e.getMessage(), e);
        }
    }

    /**
     * The {@code @Locked} settings of a method as called on a target class, read and checked once.
     *
     * @param method the method called (maybe an interface's)
     * @param targetClass the class of the bean
     * @return the settings, or empty when the method is not locked
     * @throws IllegalStateException when the annotation's attributes are wrong or the method
     *     returns a reactive or asynchronous type
     */
    Optional<LockedMethod> describe(Method method, Class<?> targetClass) {
        MethodClassKey key = new MethodClassKey(method, targetClass);
        Optional<LockedMethod> known = methods.get(key);
        if (known != null) {
            return known;
        }
        Optional<LockedMethod> found = Optional.ofNullable(read(method, targetClass));
        methods.putIfAbsent(key, found);
        return found;
    }

    private LockedMethod read(Method method, Class<?> targetClass) {
        Method specific = BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, targetClass));
        Locked locked = AnnotatedElementUtils.findMergedAnnotation(specific, Locked.class);
        if (locked == null && specific != method) {
            locked = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
        }
        if (locked == null && Modifier.isPublic(method.getModifiers()) && !ReflectionUtils.isObjectMethod(specific)) {
            // on a class or interface: its public methods, not equals, hashCode and toString
            locked = AnnotatedElementUtils.findMergedAnnotation(ClassUtils.getUserClass(targetClass), Locked.class);
            if (locked == null) {
                locked = AnnotatedElementUtils.findMergedAnnotation(method.getDeclaringClass(), Locked.class);
            }
        }
        return locked == null ? null : LockedMethod.of(specific, targetClass, locked, placeholders);
    }

    /** Stops the release thread; releases still waiting for their {@link Locked#holdAtLeast()} are made now. */
    void shutdown() {
        for (Runnable release : releases.shutdownNow()) {
            release.run();
        }
    }

    /** Interrupts the method's thread when the lock is lost, only while the method runs. */
    private static final class Interrupter {
        private final Thread thread;
        private boolean running = true;
        private boolean interrupted;

        Interrupter(Thread thread) {
            this.thread = thread;
        }

        synchronized void lost() {
            if (running) {
                interrupted = true;
                log.warn("the lock of a @Locked method running on thread '{}' was lost; interrupting it", thread.getName());
                thread.interrupt();
            }
        }

        /** On the method's thread, when it returned: our interrupt must not reach the caller. */
        synchronized void done() {
            running = false;
            if (interrupted) {
                Thread.interrupted();
            }
        }
    }

    /**
     * The root object of a name template.
     *
     * @param method the method called
     * @param args its arguments
     * @param target the bean
     * @param targetClass the bean's class
     */
    record LockedExpressionRoot(Method method, Object[] args, Object target, Class<?> targetClass) {
        /** {@return the method's name} */
        public String getMethodName() {
            return method.getName();
        }

        /** {@return the method} */
        public Method getMethod() {
            return method;
        }

        /** {@return the arguments} */
        public Object[] getArgs() {
            return args;
        }

        /** {@return the bean} */
        public Object getTarget() {
            return target;
        }

        /** {@return the bean's class} */
        public Class<?> getTargetClass() {
            return targetClass;
        }
    }
}
