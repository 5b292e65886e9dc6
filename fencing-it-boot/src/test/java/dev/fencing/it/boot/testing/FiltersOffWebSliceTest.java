package dev.fencing.it.boot.testing;

import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A web slice with servlet filters turned off (as tests with Spring Security often do): a caller's header on the
 * filter's own path cannot be admitted, so it is refused with 403, and the answer says the filter did not run rather
 * than that the path does not accept the header.
 */
@WebMvcTest(controllers = WalletController.class, properties = "fencing.web.filter.url-patterns=/internal/*")
@AutoConfigureMockMvc(addFilters = false)
class FiltersOffWebSliceTest {

    @Autowired
    MockMvc mvc;

    @MockitoBean
    WalletService wallets;

    @Test
    void aHeaderOnTheFiltersPathIsRefusedSayingTheFilterDidNotRun() throws Exception {
        MockHttpServletResponse response = mvc.perform(post("/internal/wallets/3/deposits/10")
                .header(FencingHeader.NAME, new FencingToken("wallets:3", 6, "caller").toText()))
                .andReturn().getResponse();
        assertThat(response.getStatus()).isEqualTo(403);
        assertThat(response.getContentAsString()).contains("no token filter ran for this request");
        verifyNoInteractions(wallets);
    }
}
