package dev.kanuki.spring;

import dev.kanuki.LockHandle;
import dev.kanuki.spi.Durations;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.stream.DoubleStream;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;

/** One {@link Locked @Locked} method, read and checked once: its name template, durations and what a skip returns. */
final class LockedMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final String[] REACTIVE = {"org.reactivestreams.Publisher", "kotlinx.coroutines.flow.Flow"};

    final Method method;
    final String description;
    final String template;
    /** Null when the name is the method's own (no template). */
    final Expression name;
    final String fixedName;
    final Duration wait;
    final Duration holdAtLeast;
    final Locked.OnBusy onBusy;
    final Locked.OnLost onLost;
    /** The index of a {@link LockHandle} parameter, or -1. */
    final int handleParameter;

    private LockedMethod(Method method, Class<?> targetClass, Locked locked, Function<String, String> placeholders) {
        this.method = method;
        this.description = "@Locked on " + ClassUtils.getQualifiedMethodName(method, targetClass) + "()";
        this.onBusy = locked.onBusy();
        this.onLost = locked.onLost();
        this.wait = duration("waitUpTo", locked.waitUpTo(), placeholders);
        this.holdAtLeast = duration("holdAtLeast", locked.holdAtLeast(), placeholders);
        String resolved = placeholders.apply(locked.name());
        if (resolved.isEmpty()) {
            this.template = "";
            this.name = null;
            this.fixedName = ClassUtils.getUserClass(targetClass).getName() + "." + method.getName();
        } else {
            this.template = resolved;
            try {
                this.name = PARSER.parseExpression(resolved, new TemplateParserContext());
            } catch (ParseException e) {
                throw new IllegalStateException(description + ": cannot read the name template '" + resolved
                        + "': " + e.getMessage() + " (write e.g. \"team-#{#team.id}\")", e);
            }
            this.fixedName = null;
        }
        int handle = -1;
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == LockHandle.class) {
                if (handle >= 0) {
                    throw new IllegalStateException(description + ": more than one LockHandle parameter");
                }
                handle = i;
            }
        }
        this.handleParameter = handle;
        checkReturnType(method, targetClass);
    }

    static LockedMethod of(Method method, Class<?> targetClass, Locked locked, Function<String, String> placeholders) {
        return new LockedMethod(method, targetClass, locked, placeholders);
    }

    private Duration duration(String attribute, String text, Function<String, String> placeholders) {
        String value = placeholders.apply(text).trim();
        try {
            if (value.regionMatches(true, 0, "P", 0, 1) || value.startsWith("-")) {
                Duration d = Duration.parse(value);
                if (d.isNegative()) {
                    throw new IllegalArgumentException("negative");
                }
                return d;
            }
            return Durations.parse(value);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalStateException(description + ": cannot read " + attribute + " = \"" + text
                    + "\"; write e.g. 0, 500ms, 5s, 2m, 1h or PT5S", e);
        }
    }

    private void checkReturnType(Method method, Class<?> targetClass) {
        Class<?> type = method.getReturnType();
        String refused = null;
        if (Flow.Publisher.class.isAssignableFrom(type)) {
            refused = "a Flow.Publisher";
        }
        for (String reactive : REACTIVE) {
            if (refused == null && assignable(reactive, type, targetClass)) {
                refused = "a reactive type (" + reactive + ")";
            }
        }
        if (refused == null && (CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type))
                && !isAsync(method, targetClass)) {
            refused = "an asynchronous type";
        }
        if (refused != null) {
            throw new IllegalStateException(description + " returns " + type.getName() + ", " + refused
                    + ": its work runs after the method returned, when the lock would already be released. @Locked"
                    + " guards blocking methods only (and @Async methods, whose body runs on the executor's thread"
                    + " under the lock); in a reactive or asynchronous pipeline take the lock with"
                    + " LockProvider.lock(name).acquireAsync(timeout) and close the handle when the work completes.");
        }
    }

    private static boolean assignable(String className, Class<?> type, Class<?> targetClass) {
        ClassLoader loader = targetClass.getClassLoader();
        if (!ClassUtils.isPresent(className, loader)) {
            return false;
        }
        return ClassUtils.resolveClassName(className, loader).isAssignableFrom(type);
    }

    private static boolean isAsync(Method method, Class<?> targetClass) {
        return AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(targetClass, Async.class)
                || AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class);
    }

    /** {@return what a skipped call returns: nothing, an empty container, or a primitive's zero} */
    Object skipValue() {
        Class<?> type = method.getReturnType();
        if (type == void.class) {
            return null;
        }
        if (type.isPrimitive()) {
            return Array.get(Array.newInstance(type, 1), 0); // false, 0, '\0'
        }
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == OptionalInt.class) {
            return OptionalInt.empty();
        }
        if (type == OptionalLong.class) {
            return OptionalLong.empty();
        }
        if (type == OptionalDouble.class) {
            return OptionalDouble.empty();
        }
        if (type.isArray()) {
            return Array.newInstance(type.getComponentType(), 0);
        }
        if (type == Stream.class) {
            return Stream.empty();
        }
        if (type == IntStream.class) {
            return IntStream.empty();
        }
        if (type == LongStream.class) {
            return LongStream.empty();
        }
        if (type == DoubleStream.class) {
            return DoubleStream.empty();
        }
        if (type == NavigableSet.class || type == SortedSet.class) {
            return Collections.emptyNavigableSet();
        }
        if (type == NavigableMap.class || type == SortedMap.class) {
            return Collections.emptyNavigableMap();
        }
        if (type == Set.class) {
            return Set.of();
        }
        if (type == Map.class) {
            return Map.of();
        }
        if (type == List.class || type == Collection.class || type == Iterable.class) {
            return List.of();
        }
        return null;
    }
}
