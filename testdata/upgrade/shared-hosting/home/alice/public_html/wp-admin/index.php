<?php /* dashboard */
