<?php /* a web shell someone uploaded */
