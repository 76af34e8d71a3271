package dev.kanuki.jdbc;

import dev.kanuki.LockBackendException;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names the reason a database refused a connection, with what to do: a wrong or missing password,
 * a login the server does not allow, a database that does not exist. Recognised by SQLSTATE and
 * the servers' error codes, so that the hint is not a list of everything that could be wrong
 * ("check that the server is running and that host, port, …") when the server has said which.
 * Hints have no parentheses: the CLI puts the hint in parentheses.
 */
final class SqlConnectErrors {
    /** MySQL and MariaDB: ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_BAD_DB_ERROR. */
    private static final int MYSQL_DATABASE_DENIED = 1044;
    private static final int MYSQL_ACCESS_DENIED = 1045;
    private static final int MYSQL_BAD_DATABASE = 1049;
    private static final Pattern POSTGRES_DATABASE = Pattern.compile("database \"([^\"]*)\" does not exist");
    private static final Pattern MYSQL_DATABASE = Pattern.compile("(?:Unknown database|to database) '([^']*)'");
    private static final Pattern MYSQL_USER = Pattern.compile("Access denied for user (\\S+)");

    private SqlConnectErrors() {
    }

    /**
     * @param where the server and database, as messages show them
     * @param e what connecting threw
     * @return the error naming the cause, or null when it is not one of those recognised
     */
    static LockBackendException recognised(String where, SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (!(t instanceof SQLException sql)) {
                continue;
            }
            String state = String.valueOf(sql.getSQLState());
            int code = sql.getErrorCode();
            String text = serverText(sql.getMessage());
            if (text.contains("no password was provided")) { // PostgreSQL's driver, before sending anything
                return new LockBackendException(where + " requires a password and none was given",
                        "give it in the URI, USER:PASSWORD@HOST or ?password=, or in a file: ?passwordFile=FILE", e);
            }
            if (state.equals("28P01") || code == MYSQL_ACCESS_DENIED) {
                Matcher user = MYSQL_USER.matcher(text);
                String who = user.find() ? " for user " + user.group(1) : "";
                String reason = text.contains("using password: NO") ? "no password was given" + who
                        : state.equals("28P01") ? text : "wrong user name or password" + who;
                return new LockBackendException(where + " refused the login: " + reason,
                        "check the user and password in the URI: USER:PASSWORD@HOST, ?password= or ?passwordFile=FILE", e);
            }
            if (code == MYSQL_DATABASE_DENIED) { // the server does not tell this user whether the database exists
                Matcher name = MYSQL_DATABASE.matcher(text);
                String database = name.find() ? name.group(1) : "NAME";
                return new LockBackendException(where + " gives this user no access to database " + database
                        + ": it does not exist, or the user has no privileges on it",
                        "create it with CREATE DATABASE " + database + " and grant the user access with GRANT ALL ON "
                                + database + ".* TO USER, or name a database the user may use", e);
            }
            if (state.equals("28000")) { // e.g. no pg_hba.conf entry for this host and user
                return new LockBackendException(where + " refused the login: " + text,
                        "let this user log in from this host, in pg_hba.conf for PostgreSQL, or use a user that may", e);
            }
            if (state.equals("3D000") || code == MYSQL_BAD_DATABASE) {
                Matcher name = (code == MYSQL_BAD_DATABASE ? MYSQL_DATABASE : POSTGRES_DATABASE).matcher(text);
                String database = name.find() ? name.group(1) : "";
                return new LockBackendException(where + " has no database " + database,
                        "create it with CREATE DATABASE " + (database.isEmpty() ? "NAME" : database)
                                + ", or name an existing one in the URI", e);
            }
        }
        return null;
    }

    /** {@return the message's first line without the drivers' prefixes ("FATAL: ", MariaDB's "(conn=N) ")} */
    private static String serverText(String message) {
        String text = String.valueOf(message).strip();
        int end = text.indexOf('\n');
        if (end >= 0) {
            text = text.substring(0, end).strip();
        }
        if (text.startsWith("(conn=")) {
            text = text.substring(text.indexOf(')') + 1).strip();
        }
        if (text.startsWith("FATAL: ")) {
            text = text.substring("FATAL: ".length());
        }
        return text;
    }
}
