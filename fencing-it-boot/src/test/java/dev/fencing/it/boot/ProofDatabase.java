package dev.fencing.it.boot;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * A database of one test run on the local servers: parallel builds share them, so each run works in a PostgreSQL
 * schema ({@code currentSchema=} on the URL, Flyway creates it) or a MariaDB database of its own, named
 * {@code fit_<random>}, and drops it at the end.
 */
abstract class ProofDatabase {

    static final String POSTGRES_SERVER = "jdbc:postgresql://127.0.0.1:5432/test";
    static final String MARIADB_SERVER = "jdbc:mariadb://127.0.0.1:3306/";

    final String name = "fit_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    /** The vendor's name, as in the Flyway locations ({vendor}). */
    abstract String vendor();

    /** The application's JDBC URL. */
    abstract String url();

    abstract String user();

    /** Creates what the application's Flyway cannot create itself. */
    abstract void create() throws SQLException;

    /** Drops everything this run created. */
    abstract void drop() throws SQLException;

    /** The Boot properties of the database: the data source and the Flyway migrations. */
    List<String> properties() {
        List<String> properties = new ArrayList<>(List.of(
                "spring.datasource.url=" + url(),
                "spring.datasource.username=" + user(),
                "spring.datasource.password=",
                "spring.datasource.hikari.maximum-pool-size=5",
                "spring.flyway.locations=classpath:db/proof/{vendor}"));
        return properties;
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url(), user(), "");
    }

    /** The committed max_seen of a resource, read on a connection of its own. */
    OptionalLong maxSeen(String resource) throws SQLException {
        return queryLong("SELECT max_seen FROM proof_max_seen WHERE resource = ?", resource);
    }

    OptionalLong balance(long account) throws SQLException {
        return queryLong("SELECT balance FROM proof_account WHERE id = ?", account);
    }

    boolean orderExists(long id) throws SQLException {
        return queryLong("SELECT id FROM proof_order WHERE id = ?", id).isPresent();
    }

    OptionalLong queryLong(String sql, Object parameter) throws SQLException {
        try (Connection connection = connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setObject(1, parameter);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    static void execute(String url, String user, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url, user, "");
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    static ProofDatabase postgres() {
        return new ProofDatabase() {
            @Override
            String vendor() {
                return "postgresql";
            }

            @Override
            String url() {
                return POSTGRES_SERVER + "?currentSchema=" + name;
            }

            @Override
            String user() {
                return "postgres";
            }

            @Override
            List<String> properties() {
                List<String> properties = super.properties();
                properties.add("spring.flyway.schemas=" + name);
                properties.add("spring.flyway.default-schema=" + name);
                return properties;
            }

            @Override
            void create() {
                // Flyway creates the schema (spring.flyway.schemas)
            }

            @Override
            void drop() throws SQLException {
                execute(POSTGRES_SERVER, user(), "DROP SCHEMA IF EXISTS " + name + " CASCADE");
            }

            @Override
            public String toString() {
                return "PostgreSQL schema " + name;
            }
        };
    }

    static ProofDatabase mariadb() {
        return new ProofDatabase() {
            @Override
            String vendor() {
                return "mariadb";
            }

            @Override
            String url() {
                return MARIADB_SERVER + name;
            }

            @Override
            String user() {
                return "root";
            }

            @Override
            void create() throws SQLException {
                execute(MARIADB_SERVER + "test", user(), "CREATE DATABASE " + name);
            }

            @Override
            void drop() throws SQLException {
                execute(MARIADB_SERVER + "test", user(), "DROP DATABASE IF EXISTS " + name);
            }

            @Override
            public String toString() {
                return "MariaDB database " + name;
            }
        };
    }
}
