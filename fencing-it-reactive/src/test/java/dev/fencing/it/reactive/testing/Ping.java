package dev.fencing.it.reactive.testing;

import org.springframework.data.annotation.Id;

/** The entity type the repository is declared for; the fenced query reads no table. */
public record Ping(@Id Long id) {
}
