package dev.kanuki.contract;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a concrete {@link LockProviderContract} test with the URI scheme it covers, so that
 * {@link ContractCoverageCheck} can tell which registered backends have a contract test.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ContractFor {
    /** {@return the URI schemes the test covers, e.g. {@code file}, or {@code {"mysql", "mariadb"}} for aliases} */
    String[] value();

    /**
     * {@return the variants of the scheme the test covers, when the backend has several that
     *     work differently (e.g. {@code strategy=os} of {@code file}); see
     *     {@link ContractCoverageCheck#requiredVariants()}}
     */
    String[] variants() default {};
}
