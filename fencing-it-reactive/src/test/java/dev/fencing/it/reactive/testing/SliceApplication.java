package dev.fencing.it.reactive.testing;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A reactive application as its team tests it with Boot's reactive slices (the tests beside it). */
@SpringBootApplication
public class SliceApplication {
}
