package dev.fencing.it.reactive.app;

import org.springframework.data.annotation.Id;

/**
 * One applied write in the log ({@code proof.tables.applied}): the account and the token it was written with;
 * {@code seq}, the database's identity, is the order the writes were applied in.
 */
public record AppliedToken(@Id Long seq, long accountId, long token) {
}
