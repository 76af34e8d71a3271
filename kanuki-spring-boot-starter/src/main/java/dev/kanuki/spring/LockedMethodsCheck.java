package dev.kanuki.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks every {@link Locked @Locked} method of the application's beans when the context starts,
 * so that a wrong name template or duration, or a reactive return type, stops the start with a
 * message instead of failing the first call. Beans made later (lazy, prototype) are checked at
 * their first call.
 */
final class LockedMethodsCheck implements SmartInitializingSingleton {
    private final ConfigurableListableBeanFactory beanFactory;
    private final LockedAdvisor advisor;

    LockedMethodsCheck(ConfigurableListableBeanFactory beanFactory, LockedAdvisor advisor) {
        this.beanFactory = beanFactory;
        this.advisor = advisor;
    }

    @Override
    public void afterSingletonsInstantiated() {
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type;
            try {
                type = beanFactory.getType(name, false);
            } catch (RuntimeException e) {
                continue; // a bean whose type cannot be told without making it: checked at its first call
            }
            if (type == null) {
                continue;
            }
            // a proxied singleton: the class behind the proxy, as the interceptor sees it at a call
            Object singleton = beanFactory.containsSingleton(name) ? beanFactory.getSingleton(name) : null;
            Class<?> userClass = singleton != null ? AopUtils.getTargetClass(singleton) : ClassUtils.getUserClass(type);
            if (!AnnotationUtils.isCandidateClass(userClass, Locked.class)) {
                continue;
            }
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
                if (Modifier.isStatic(method.getModifiers()) || !advisor.applies(method, userClass)) {
                    continue;
                }
                try {
                    advisor.getInterceptor().describe(method, userClass);
                } catch (IllegalStateException e) {
                    throw new IllegalStateException("bean '" + name + "': " + e.getMessage(), e);
                }
            }
        }
    }
}
