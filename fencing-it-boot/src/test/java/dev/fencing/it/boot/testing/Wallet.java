package dev.fencing.it.boot.testing;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/** A row of the tested application's table. */
@Table("tested_wallet")
public record Wallet(@Id Long id, long balance) {
}
