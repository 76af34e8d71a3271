package dev.kanuki.spi;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * Says what went wrong with a file or directory the way the operating system means it
 * ("Read-only file system", "Not a directory"), without Java's exception class names, and what
 * to do about it. For backends that keep locks in a directory.
 */
public final class FileErrors {
    private FileErrors() {
    }

    /**
     * Says what went wrong with a file operation, for a message.
     *
     * @param e a failed file operation
     * @return its cause in words, naming the file: e.g. {@code Read-only file system (/srv/locks)}
     */
    public static String reason(IOException e) {
        if (e instanceof FileAlreadyExistsException fae) {
            return fae.getFile() + " exists and is not a directory";
        }
        if (e instanceof NoSuchFileException nsf) {
            return "no such file or directory: " + nsf.getFile();
        }
        if (e instanceof AccessDeniedException ade) {
            return "permission denied on " + ade.getFile();
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason() + (fse.getFile() == null ? "" : " (" + fse.getFile() + ")");
        }
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    /**
     * Says what the user can do when a lock directory cannot be created or opened.
     *
     * @param e a failed attempt to create or open a lock directory
     * @param scheme the backend's URI scheme, for the advice ({@code file}, {@code sqlite})
     * @return what the user can do about it
     */
    public static String hint(IOException e, String scheme) {
        String reason = reason(e);
        if (reason.contains("Read-only file system")) {
            return "name a directory on a writable file system with " + scheme + ":DIR";
        }
        if (e instanceof FileAlreadyExistsException || reason.contains("Not a directory")) {
            return "a part of the path is a file, not a directory: name another directory with " + scheme + ":DIR";
        }
        if (e instanceof AccessDeniedException) {
            return "name a directory user " + System.getProperty("user.name") + " can write with " + scheme + ":DIR";
        }
        if (reason.contains("No space left")) {
            return "free some space on that file system, or name another directory with " + scheme + ":DIR";
        }
        return "check the path, or name another directory with " + scheme + ":DIR";
    }
}
