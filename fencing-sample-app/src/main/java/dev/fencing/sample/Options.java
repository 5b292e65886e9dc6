package dev.fencing.sample;

import java.time.Duration;
import java.util.Locale;

/**
 * The sample's command line. Every option has an embedded default; an unknown option or a bad value is an
 * {@link IllegalArgumentException} that says which (the application then exits with 2).
 */
public record Options(boolean help, boolean serve, int port, Duration lease, String zookeeper, String etcd,
                      String redis, String jdbcUrl, String jdbcUser, String jdbcPassword, Duration duration,
                      boolean zombie) {

    public static final String USAGE = """
            usage: java -jar fencing-sample-app.jar [options]

            Runs the canonical zombie race under each locking strategy against real lock services and prints which
            strategies stop the stale holder. Exit code 0 only if every fenced strategy blocked the zombie.

              --help                  print this help and exit
              --lease-ms N            lease / session time the zombie pauses past (default 500)
              --zookeeper HOST:PORT   a ZooKeeper ensemble (default: an embedded server)
              --etcd URL              an etcd endpoint (default: http://127.0.0.1:2379 if it answers, else skipped)
              --redis HOST:PORT       a Redis server for the Redis and Redisson rows (default: 127.0.0.1:6379 if
                                      it answers, else skipped)
              --jdbc-url URL          the database holding data and fence (default: embedded H2 in memory);
                                      PostgreSQL and MariaDB work too
              --jdbc-user USER        database user (default: sa for H2, postgres for PostgreSQL, root for MariaDB)
              --jdbc-password PASS    database password (default: empty)
              --serve                 instead of the table, keep a workload running (clients and periodic zombies)
                                      and expose Prometheus metrics on loopback
              --port N                with --serve: the metrics port (default 9464; 0 picks a free one)
              --duration SECONDS      with --serve: stop after this long (default: run until interrupted)
              --no-zombie             with --serve: the clients only, no zombie (a healthy workload: no alert
                                      of docs/prometheus/fencing-alerts.yml fires)
              --admin reset-floor RESOURCE ...
                                      instead of the race, lower a resource's max_seen after a bad token
                                      (see --admin --help)
              --admin raise-floors ...
                                      raise every resource's max_seen after restoring the fence table
                                      (see --admin raise-floors --help)
              --admin compact ...     fold idle per-entity resources into their family's floor
                                      (see --admin compact --help)
            """;

    public static Options parse(String... args) {
        boolean help = false;
        boolean serve = false;
        int port = 9464;
        Duration lease = Duration.ofMillis(500);
        String zookeeper = null;
        String etcd = null;
        String redis = null;
        String jdbcUrl = null;
        String jdbcUser = null;
        String jdbcPassword = "";
        Duration duration = null;
        boolean zombie = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--help", "-h" -> help = true;
                case "--serve" -> serve = true;
                case "--port" -> port = intValue(arg, value(args, i++), 0, 65535);
                case "--lease-ms" -> lease = Duration.ofMillis(intValue(arg, value(args, i++), 50, 60_000));
                case "--zookeeper" -> zookeeper = hostPort(arg, value(args, i++));
                case "--etcd" -> etcd = url(arg, value(args, i++));
                case "--redis" -> redis = hostPort(arg, value(args, i++));
                case "--jdbc-url" -> jdbcUrl = jdbc(arg, value(args, i++));
                case "--jdbc-user" -> jdbcUser = value(args, i++);
                case "--jdbc-password" -> jdbcPassword = value(args, i++);
                case "--duration" -> duration = Duration.ofSeconds(intValue(arg, value(args, i++), 1, 86_400));
                case "--no-zombie" -> zombie = false;
                default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
            }
        }
        return new Options(help, serve, port, lease, zookeeper, etcd, redis, jdbcUrl, jdbcUser, jdbcPassword, duration,
                zombie);
    }

    /** The value after option {@code args[i]}; also for {@link AdminCommand}. */
    static String value(String[] args, int i) {
        if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
            throw new IllegalArgumentException("option '" + args[i] + "' needs a value");
        }
        return args[i + 1];
    }

    private static int intValue(String option, String value, int min, int max) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed < min || parsed > max) {
                throw new IllegalArgumentException("option '" + option + "' must be between " + min + " and " + max
                        + ", was " + value);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option '" + option + "' needs a number, was '" + value + "'");
        }
    }

    private static String hostPort(String option, String value) {
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new IllegalArgumentException("option '" + option + "' needs HOST:PORT, was '" + value + "'");
        }
        intValue(option, value.substring(colon + 1), 1, 65535);
        return value;
    }

    private static String url(String option, String value) {
        if (!value.startsWith("http://") && !value.startsWith("https://")) {
            throw new IllegalArgumentException("option '" + option + "' needs an http(s) URL, was '" + value + "'");
        }
        return value;
    }

    private static String jdbc(String option, String value) {
        String lower = value.toLowerCase(Locale.ROOT);
        if (!lower.startsWith("jdbc:postgresql:") && !lower.startsWith("jdbc:mariadb:")
                && !lower.startsWith("jdbc:h2:")) {
            throw new IllegalArgumentException("option '" + option + "' needs a jdbc:postgresql:, jdbc:mariadb: or "
                    + "jdbc:h2: URL, was '" + value + "'");
        }
        return value;
    }
}
