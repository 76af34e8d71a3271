package dev.kanuki.testkit;

/**
 * A database server the tests need is not installed. The message is one line that names the
 * Debian package to install, e.g. {@code PostgreSQL server binaries (initdb, postgres) not found
 * ...: install the Debian package 'postgresql'}. The test kit never installs anything itself.
 */
public final class MissingServerException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** The Debian package that provides the missing binaries. */
    private final String debianPackage;

    MissingServerException(String what, String searched, String debianPackage) {
        super(what + " not found (" + searched + "): install the Debian package '" + debianPackage + "'");
        this.debianPackage = debianPackage;
    }

    /** {@return the Debian/Ubuntu package that provides the missing binaries} */
    public String debianPackage() {
        return debianPackage;
    }
}
