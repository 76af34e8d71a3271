package dev.kanuki.sqlite;

import dev.kanuki.spi.SafeNames;

/**
 * The file names of lock databases: {@link SafeNames}' readable prefix plus 128 bits of SHA-256,
 * as kanuki-file names its lock files, so no name can reach outside the directory and a listing
 * reads the same.
 */
final class SqliteNames {
    private SqliteNames() {
    }

    /**
     * @param name a validated lock name
     * @return the file name of the name's lock database, e.g. {@code reports.3f2a...9c.db}
     */
    static String lockFile(String name) {
        return SafeNames.stem(name, "L") + ".db";
    }

    /**
     * @param name a validated semaphore name
     * @param slot the permit's index
     * @return the file name of one permit's lock database
     */
    static String permitFile(String name, int slot) {
        return SafeNames.stem(name, "S" + slot) + ".permit" + slot + ".db";
    }
}
