package dev.fencing.verify.database;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One database the harness connects to: its kind, its JDBC URL and its user. {@link #of(String)} reads the kind
 * from the URL and the user from its {@code user=} parameter, or takes the kind's default user (the test servers
 * need no password). Connections made here are bounded: 10 s to connect, 60 s per statement.
 *
 * @param kind PostgreSQL or MariaDB
 * @param url  the JDBC URL
 * @param user the user to connect as
 */
public record Database(DatabaseKind kind, String url, String user) {

    /** The PostgreSQL the test suite uses: 127.0.0.1:5432, database test (user postgres, trust auth). */
    public static final String POSTGRESQL_TEST_URL = "jdbc:postgresql://127.0.0.1:5432/test";

    /** The MariaDB the test suite uses: 127.0.0.1:3306, database test (user root, no password). */
    public static final String MARIADB_TEST_URL = "jdbc:mariadb://127.0.0.1:3306/test";

    private static final Pattern USER = Pattern.compile("[?&;]user=([^&;]*)");

    public Database {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(user, "user");
    }

    /**
     * The database at {@code url}.
     *
     * @throws IllegalArgumentException when the URL is not a PostgreSQL or MariaDB one
     */
    public static Database of(String url) {
        DatabaseKind kind = DatabaseKind.ofUrl(url);
        Matcher m = USER.matcher(url);
        return new Database(kind, url, m.find() ? m.group(1) : kind.defaultUser());
    }

    /** The test server of {@code kind}. */
    public static Database defaultOf(DatabaseKind kind) {
        return of(kind.defaultUrl());
    }

    /** A new connection, which the caller closes. */
    public Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (kind == DatabaseKind.POSTGRESQL) {
            p.setProperty("connectTimeout", "10");
            p.setProperty("socketTimeout", "60");
        } else {
            p.setProperty("connectTimeout", "10000");
            p.setProperty("socketTimeout", "60000");
        }
        return DriverManager.getConnection(url, p);
    }

    /** Whether {@code other} is the same database (the same URL). */
    public boolean sameAs(Database other) {
        return other != null && url.equals(other.url);
    }
}
