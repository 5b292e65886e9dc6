package dev.fencing.it.reactive.app;

import org.springframework.data.annotation.Id;

/** An account row, mapped by Spring Data R2DBC (the table's name is per test run: {@code proof.tables.accounts}). */
public record Account(@Id long id, long balance) {
}
