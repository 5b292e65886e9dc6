package dev.fencing.docs.web;

import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingTokenClientInterceptor;
import dev.fencing.web.FencingTokenFilter;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.client.RestClient;

/** docs/propagation.md: tokens over HTTP, both sides. Started by WebFencingConfigTest. */
// tag::http[]
@Configuration
@Import(FencingExceptionAdvice.class)   // refused calls as problem details: 400, 409, 428, 503 (listed below)
public class WebFencingConfig {

    @Bean                                                                   // caller: sends the bound tokens
    RestClient serviceB() {
        return RestClient.builder().baseUrl("http://service-b")
                .requestInterceptor(new FencingTokenClientInterceptor()).build();
    }

    @Bean                                                                   // callee: internal paths only
    FilterRegistrationBean<FencingTokenFilter> fencingFilter() {
        FilterRegistrationBean<FencingTokenFilter> registration =
                new FilterRegistrationBean<>(new FencingTokenFilter());
        registration.addUrlPatterns("/internal/*");
        return registration;
    }
}
// end::http[]
