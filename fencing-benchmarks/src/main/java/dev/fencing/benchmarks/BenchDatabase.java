package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import dev.fencing.store.sql.FenceSql;

import java.util.Arrays;

/**
 * The databases the JDBC benchmarks run on, named by their {@code database} JMH parameter: where each one is
 * (JDBC URL, user, password, each overridable by a system property) and the few DDL statements that differ between
 * them. PostgreSQL keeps the properties it always had ({@code bench.jdbcUrl}, {@code bench.user},
 * {@code bench.password}); MariaDB's are {@code bench.mariadb.jdbcUrl}, {@code bench.mariadb.user} and
 * {@code bench.mariadb.password}; its default URL keeps {@code allowMultiQueries=true}, which the store's checks at
 * commit needed on MariaDB before the store refused that mode there (the figures of those runs used it).
 */
public enum BenchDatabase {

    POSTGRESQL("postgresql", "bench.jdbcUrl", "jdbc:postgresql://127.0.0.1:5432/test", "bench.user", "postgres",
            "bench.password", FenceSql.POSTGRESQL, "BIGSERIAL PRIMARY KEY", "generate_series(0, %d) g(n)"),

    MARIADB("mariadb", "bench.mariadb.jdbcUrl", "jdbc:mariadb://127.0.0.1:3306/test?allowMultiQueries=true",
            "bench.mariadb.user", "root", "bench.mariadb.password", FenceSql.MARIADB,
            "BIGINT AUTO_INCREMENT PRIMARY KEY", "(SELECT seq AS n FROM seq_0_to_%d) g");

    private final String param;
    private final String urlProperty;
    private final String defaultUrl;
    private final String userProperty;
    private final String defaultUser;
    private final String passwordProperty;
    private final FenceSql fenceSql;
    private final String generatedKey;
    private final String numbers;

    BenchDatabase(String param, String urlProperty, String defaultUrl, String userProperty, String defaultUser,
                  String passwordProperty, FenceSql fenceSql, String generatedKey, String numbers) {
        this.param = param;
        this.urlProperty = urlProperty;
        this.defaultUrl = defaultUrl;
        this.userProperty = userProperty;
        this.defaultUser = defaultUser;
        this.passwordProperty = passwordProperty;
        this.fenceSql = fenceSql;
        this.generatedKey = generatedKey;
        this.numbers = numbers;
    }

    /**
     * The database a {@code database} parameter names ({@code postgresql} or {@code mariadb}).
     *
     * @throws IllegalArgumentException naming the benchmark and the values allowed, for any other value
     */
    public static BenchDatabase of(String benchmark, String database) {
        for (BenchDatabase candidate : values()) {
            if (candidate.param.equals(database)) {
                return candidate;
            }
        }
        throw new IllegalArgumentException(benchmark + ": database must be one of "
                + Arrays.stream(values()).map(d -> d.param).toList() + ", was '" + database + "'");
    }

    /** The JDBC URL: the system property's value, or the default. */
    public String jdbcUrl() {
        return System.getProperty(urlProperty, defaultUrl);
    }

    /** The user: the system property's value, or the default ({@code postgres}, {@code root}). */
    public String user() {
        return System.getProperty(userProperty, defaultUser);
    }

    /** The password: the system property's value, or none (empty). */
    public String password() {
        return System.getProperty(passwordProperty, "");
    }

    /** A pool configuration pointing at this database (URL, user, password); the caller sizes it. */
    public HikariConfig poolConfig() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setUsername(user());
        config.setPassword(password());
        return config;
    }

    /** The fence table's SQL for this database. */
    public FenceSql fenceSql() {
        return fenceSql;
    }

    /** The column definition of a generated {@code BIGINT} primary key ({@code BIGSERIAL}, {@code AUTO_INCREMENT}). */
    public String generatedKey() {
        return generatedKey;
    }

    /**
     * A {@code FROM} item (alias {@code g}) of the numbers 0 to {@code last}, one column {@code n}: PostgreSQL's
     * {@code generate_series}, MariaDB's Sequence engine table {@code seq_0_to_<last>}.
     */
    public String numbers(int last) {
        return numbers.formatted(last);
    }
}
