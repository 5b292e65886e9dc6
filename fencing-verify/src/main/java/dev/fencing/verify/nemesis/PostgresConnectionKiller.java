package dev.fencing.verify.nemesis;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Terminates a client's PostgreSQL sessions with {@code pg_terminate_backend}, finding them by the
 * {@code application_name} the client connects with: {@code <run prefix>_client-<n>}, set through the JDBC URL's
 * {@code ApplicationName} parameter ({@link #withApplicationName}). Every connection of the client carries it: the
 * store's, and the JDBC lease's when the lease is the issuer.
 */
public final class PostgresConnectionKiller implements ConnectionKiller {

    private final String jdbcUrl;
    private final String user;
    private final String runPrefix;

    /** Connects as {@code user} to {@code jdbcUrl} to kill the sessions of the clients of the run {@code runPrefix}. */
    public PostgresConnectionKiller(String jdbcUrl, String user, String runPrefix) {
        if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("kill-backend: not a PostgreSQL JDBC URL: " + jdbcUrl);
        }
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.runPrefix = runPrefix;
    }

    /** The application name of client {@code client} ({@code client-3}) of the run {@code runPrefix}. */
    public static String applicationName(String runPrefix, String client) {
        String name = runPrefix + "_" + client;
        if (name.length() > 63) {
            throw new IllegalArgumentException("application name longer than PostgreSQL's 63 characters: " + name);
        }
        return name;
    }

    /** {@code jdbcUrl} with the {@code ApplicationName} parameter naming {@code client} of the run. */
    public static String withApplicationName(String jdbcUrl, String runPrefix, String client) {
        return jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "ApplicationName=" + applicationName(runPrefix, client);
    }

    @Override
    public int kill(String client) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        try (Connection c = DriverManager.getConnection(jdbcUrl, props);
             PreparedStatement p = c.prepareStatement("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                     + "FROM pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()")) {
            p.setString(1, applicationName(runPrefix, client));
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
