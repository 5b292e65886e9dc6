package dev.fencing.spring;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.env.Environment;

/**
 * A check that another fencing module (fencing-web, fencing-amqp) contributes to {@code @EnableFencing}'s startup
 * validation, listed under this interface's name in a {@code META-INF/spring.factories} and loaded with Spring's
 * {@code SpringFactoriesLoader}, so it runs in plain Spring applications and under the Spring Boot starter alike. It
 * runs once every singleton of the context exists, and answers what is wrong (one problem text, which joins the
 * others in the one startup failure) or {@code null}; an implementation needs a public or package-private no-argument
 * constructor and must not fail when the classes it reads are not on the class path.
 */
public interface FencingStartupCheck {

    /**
     * What is wrong with the context's setup, or {@code null}.
     *
     * @param beans the context's bean factory, every singleton created
     * @param environment the context's environment, for an opt-out or a setting the problem depends on
     * @return the problem, worded with its fix, or {@code null}
     */
    String problem(ListableBeanFactory beans, Environment environment);
}
