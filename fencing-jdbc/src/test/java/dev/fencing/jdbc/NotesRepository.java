package dev.fencing.jdbc;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/** A plain JDBC repository whose write is fenced per key; it records the token it wrote with. */
public class NotesRepository {

    private final JdbcTemplate jdbc;
    private final String table;

    public NotesRepository(DataSource dataSource, String table) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.table = table;
    }

    @Fenced(resource = "notes", key = "#key")
    public void write(String key, String value) {
        long token = FencingContext.current("notes:" + key).value();
        jdbc.update("INSERT INTO " + table + " (k, token, v) VALUES (?, ?, ?)", key, token, value);
    }
}
