package dev.fencing.verify.database;

import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * The DDL of the fence table and of the lease table, taken from the scripts fencing-jdbc ships in its jar
 * ({@code dev/fencing/jdbc/schema-<db>.sql}, {@code lease-<db>.sql}) with the run's table name in place of the
 * default one, the way the README tells an application to create them. So the harness's tables are exactly the
 * library's, column types and collations included.
 */
public final class LibraryScripts {

    private LibraryScripts() {
    }

    /** {@code CREATE TABLE} of a {@code JdbcFenceStore} table named {@code table} on {@code kind}. */
    public static String fenceTable(DatabaseKind kind, String table) {
        return statement("schema-" + kind.label() + ".sql", JdbcFenceStore.DEFAULT_TABLE, table);
    }

    /** {@code CREATE TABLE} of a {@code JdbcTokenIssuer} table named {@code table} on {@code kind}. */
    public static String leaseTable(DatabaseKind kind, String table) {
        return statement("lease-" + kind.label() + ".sql", JdbcTokenIssuer.DEFAULT_TABLE, table);
    }

    private static String statement(String script, String defaultName, String table) {
        String path = "/dev/fencing/jdbc/" + script;
        String text;
        try (InputStream in = LibraryScripts.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("fencing-jdbc's script " + path + " is not on the class path");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
        String sql = text.lines().filter(l -> !l.strip().startsWith("--")).collect(Collectors.joining("\n")).strip();
        if (sql.endsWith(";")) {
            sql = sql.substring(0, sql.length() - 1);
        }
        if (!sql.contains(" " + defaultName + " ")) {
            throw new IllegalStateException(path + " does not create the table " + defaultName);
        }
        return sql.replace(" " + defaultName + " ", " " + table + " ");
    }
}
