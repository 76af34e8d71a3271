package dev.kanuki.spring;

import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.Ordered;

/**
 * The Spring AOP advisor of {@link Locked @Locked}: a pointcut on the annotation (on a method, or
 * on a class or interface for all its public methods, found also on superclasses and interfaces)
 * and the {@link LockedInterceptor}. Plain Spring AOP proxies, no AspectJ weaver.
 *
 * <p>Its order, {@code kanuki.locked.order}, defaults to {@link #DEFAULT_ORDER}: outside
 * {@code @Transactional} (lowest precedence), so that the lock is taken before the transaction
 * begins and released after it committed or rolled back. {@code @Async}'s advisor is put in
 * front of all others, so an {@code @Async @Locked} method takes its lock on the executor's thread.
 */
public final class LockedAdvisor extends AbstractPointcutAdvisor implements DisposableBean {
    private static final long serialVersionUID = 1L;

    /** The default order: 100 before {@link Ordered#LOWEST_PRECEDENCE}, the order of {@code @Transactional}. */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private final transient LockedInterceptor interceptor;
    private final transient Pointcut pointcut;

    /**
     * Makes the advisor.
     *
     * @param interceptor runs the locked methods
     * @param order the advisor's order
     */
    public LockedAdvisor(LockedInterceptor interceptor, int order) {
        this.interceptor = interceptor;
        Pointcut onClass = new AnnotationMatchingPointcut(Locked.class, true);
        Pointcut onMethod = new AnnotationMatchingPointcut(null, Locked.class, true);
        this.pointcut = new ComposablePointcut(onClass).union(onMethod);
        setOrder(order);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    /** {@return the interceptor} */
    public LockedInterceptor getInterceptor() {
        return interceptor;
    }

    /**
     * Whether calls of a method on a bean of a class go through this advisor.
     *
     * @param method the method
     * @param targetClass the bean's class
     * @return true when {@code @Locked} applies
     */
    boolean applies(Method method, Class<?> targetClass) {
        ClassFilter classFilter = pointcut.getClassFilter();
        return classFilter.matches(targetClass) && pointcut.getMethodMatcher().matches(method, targetClass);
    }

    /** Releases made later for {@link Locked#holdAtLeast()} are made now. */
    @Override
    public void destroy() {
        interceptor.shutdown();
    }
}
