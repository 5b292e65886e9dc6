package dev.fencing.verify.database;

import dev.fencing.jdbc.JdbcDialect;

import java.util.Locale;

/**
 * A database product the harness runs on: PostgreSQL or MariaDB. Each knows how its JDBC URLs begin, the test
 * server it defaults to, the fencing-jdbc dialect its clients use and the text column type of the lock-set row; the
 * fence and lease tables come from the library's own scripts ({@link LibraryScripts}).
 */
public enum DatabaseKind {

    /** PostgreSQL: 127.0.0.1:5432, database test, user postgres (trust auth), as the test suite uses it. */
    POSTGRESQL("postgresql", "jdbc:postgresql:", Database.POSTGRESQL_TEST_URL, "postgres",
            JdbcDialect.POSTGRESQL, "TEXT"),

    /**
     * MariaDB: 127.0.0.1:3306, database test, user root with an empty password. The set row is {@code LONGTEXT}:
     * MariaDB's {@code TEXT} holds 64 KB, some 7,000 elements, fewer than a long run adds.
     */
    MARIADB("mariadb", "jdbc:mariadb:", Database.MARIADB_TEST_URL, "root", JdbcDialect.MARIADB,
            "LONGTEXT");

    private final String label;
    private final String urlPrefix;
    private final String defaultUrl;
    private final String defaultUser;
    private final JdbcDialect dialect;
    private final String textType;

    DatabaseKind(String label, String urlPrefix, String defaultUrl, String defaultUser, JdbcDialect dialect,
                 String textType) {
        this.label = label;
        this.urlPrefix = urlPrefix;
        this.defaultUrl = defaultUrl;
        this.defaultUser = defaultUser;
        this.dialect = dialect;
        this.textType = textType;
    }

    /** The name used on the command line and in the library's script names: {@code postgresql}, {@code mariadb}. */
    public String label() {
        return label;
    }

    /** The test server's URL. */
    public String defaultUrl() {
        return defaultUrl;
    }

    /** The user when the URL names none. */
    public String defaultUser() {
        return defaultUser;
    }

    /** The dialect of the fence store and the JDBC lease on this database. */
    public JdbcDialect dialect() {
        return dialect;
    }

    /** The column type of the lock-set row (the whole set as text). */
    public String textType() {
        return textType;
    }

    /**
     * The kind a JDBC URL speaks to, from its prefix.
     *
     * @throws IllegalArgumentException naming the URL when it is neither {@code jdbc:postgresql:} nor
     *                                  {@code jdbc:mariadb:}
     */
    public static DatabaseKind ofUrl(String url) {
        String lower = url == null ? "" : url.toLowerCase(Locale.ROOT);
        for (DatabaseKind kind : values()) {
            if (lower.startsWith(kind.urlPrefix)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("not a PostgreSQL or MariaDB JDBC URL (jdbc:postgresql:... or "
                + "jdbc:mariadb:...): '" + url + "'");
    }
}
