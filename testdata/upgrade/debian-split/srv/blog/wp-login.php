<?php /* wp-login */
